//! Checks of a platform file's values that the types alone cannot make,
//! and the errors that name the file, the line and the key path
//! (`cpu_type[0].opps[3].khz`): operating points, idle states, devices, the
//! cpufreq driver and its options, rates and times.

use std::fmt::Display;
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::raw::{RawCppc, RawCpuType, RawDevice, RawFua, RawPlatform};
use crate::error::{Error, Result, line_of};
use crate::platform::cppc::Cppc;
use crate::platform::{CpuType, Device, Driver, Fua, INTEL_PSTATE_SCALING_KHZ, IdleState, Opp};

/// cpufreq drivers the engine models.
pub(super) const DRIVERS: &[&str] = &["acpi-cpufreq", "intel_pstate", "powernv", "cpufreq-dt"];

/// `CONFIG_HZ` values Kconfig offers (`kernel/Kconfig.hz`).
pub(super) const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];

/// Upper bound on SMT threads per core (POWER8 has 8).
pub(super) const MAX_THREADS_PER_CORE: usize = 8;

/// Longest time accepted in any µs field: 100 s. Far beyond any real latency;
/// it only keeps the ns conversion from overflowing.
pub(super) const MAX_TIME_US: u64 = 100_000_000;

/// The text being loaded, to turn spans into line numbers.
pub(super) struct Source<'a> {
    pub(super) text: &'a str,
    pub(super) path: &'a Path,
}

impl Source<'_> {
    /// A TOML syntax or schema error, with its line, naming the key when the
    /// parser's message does not.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> Error {
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
    pub(super) fn err(&self, span: &Range<usize>, item: &str, key: &str, msg: impl Display) -> Error {
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
    pub(super) fn missing(&self, key: &str, msg: &str) -> Error {
        Error::file(self.path, None, format!("{key}: {msg}"))
    }
}

/// Byte offset of `key = ` inside `span` of `text`, if it is written there.
pub(super) fn find_key(text: &str, span: &Range<usize>, key: &str) -> Option<usize> {
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
pub(super) fn key_before(text: &str, offset: usize) -> Option<String> {
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

/// The `driver` key, with `global_pstate` (powernv only).
pub(super) fn driver(src: &Source, raw: &RawPlatform) -> Result<Driver> {
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

/// The `psd_coordination` key (acpi-cpufreq only): whether the firmware's
/// `_PSD` asks software to coordinate the CPUs of a clock.
pub(super) fn psd_coordination(src: &Source, raw: &RawPlatform, driver: Driver) -> Result<bool> {
    let Some(v) = &raw.psd_coordination else { return Ok(false) };
    if driver != Driver::AcpiCpufreq {
        return Err(src.err(&v.span(), "", "psd_coordination", format!("only acpi-cpufreq reads _PSD; this platform's driver is {}", driver.name())));
    }
    match v.get_ref().as_str() {
        "hw" => Ok(false),
        "sw_all" | "sw_any" => Ok(true),
        other => Err(src.err(&v.span(), "", "psd_coordination", format!("unknown coordination '{other}'; valid: hw, sw_all, sw_any"))),
    }
}

/// The `hwp` key: required with intel_pstate (whether the CPUs have HWP
/// decides how the driver works), and only true there.
pub(super) fn hwp(src: &Source, raw: &RawPlatform, driver: Driver) -> Result<bool> {
    match (&raw.hwp, driver) {
        (Some(h), _) if !*h.get_ref() => Ok(false),
        (Some(_), Driver::IntelPstate { .. }) => Ok(true),
        (Some(h), other) => Err(src.err(
            &h.span(),
            "",
            "hwp",
            format!("hwp = true, but HWP is intel_pstate's and this platform's driver is {}", other.name()),
        )),
        (None, Driver::IntelPstate { .. }) => Err(src.err(
            &raw.driver.span(),
            "",
            "driver",
            "missing key hwp: required with driver intel_pstate (true where the CPUs have HWP, Skylake and later)",
        )),
        (None, _) => Ok(false),
    }
}

/// intel_pstate names every frequency by its ratio: the table must hold one
/// operating point per 100 MHz step, from the lowest to the highest.
pub(super) fn check_pstate_grid(src: &Source, i: usize, raw: &Spanned<RawCpuType>, t: &CpuType) -> Result<()> {
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

/// Check one cpu type; returns it with its voltage slew rate (mV/µs), which
/// the resolved platform keeps on the voltage domains.
pub(super) fn cpu_type(src: &Source, i: usize, raw: &Spanned<RawCpuType>) -> Result<(CpuType, f64)> {
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
    // intel_pstate's hybrid_get_cost() relies on it: no scaling factor is
    // above the P-state ratio's (INTEL_PSTATE_CORE_SCALING).
    let hwp_khz_per_perf = t.hwp_perf_khz.unwrap_or(INTEL_PSTATE_SCALING_KHZ);
    if !(1..=INTEL_PSTATE_SCALING_KHZ).contains(&hwp_khz_per_perf) {
        return Err(err(
            "hwp_perf_khz",
            format!("{hwp_khz_per_perf} is not in 1..={INTEL_PSTATE_SCALING_KHZ} (kHz per HWP level; a P-state ratio is 100000)"),
        ));
    }
    positive(&err, "voltage_slew_mv_per_us", t.voltage_slew_mv_per_us)?;
    positive(&err, "ceff_nf", t.ceff_nf)?;
    non_negative(&err, "leakage_mw_per_v", t.leakage_mw_per_v)?;
    if t.dynamic_power_coefficient == Some(0) {
        return Err(err("dynamic_power_coefficient", "must be positive (leave it out for no Energy Model)".into()));
    }
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
    let turbo_max_khz: Vec<u32> = match (&t.turbo_max_khz, turbo.is_empty()) {
        (Some(_), true) => return Err(err("turbo_max_khz", "given, but no OPP has turbo = true".into())),
        (None, false) => {
            return Err(err(
                "turbo_max_khz",
                "missing: required when an OPP has turbo = true (the highest turbo kHz with 1, 2, ... active \
                 cores; one entry when the number of active cores does not matter)"
                    .into(),
            ))
        }
        (Some(v), false) if v.is_empty() => return Err(err("turbo_max_khz", "empty: give at least one ceiling".into())),
        (v, _) => v.clone().unwrap_or_default(),
    };
    for (j, &khz) in turbo_max_khz.iter().enumerate() {
        if !turbo.contains(&khz) {
            return Err(err(
                "turbo_max_khz",
                format!("entry {j} ({khz}) is not the khz of a turbo OPP"),
            ));
        }
        if j > 0 && khz > turbo_max_khz[j - 1] {
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
        if j == 0 && !s.in_acpi_cst {
            return Err(serr(
                "in_acpi_cst",
                "state 0 (the polling loop, or WFI) is the kernel's own, never filtered by _CST".into(),
            ));
        }
        non_negative(&serr, "power_mw", s.power_mw)?;
        non_negative(&serr, "entry_exit_uj", s.entry_exit_uj)?;
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
        let wake_latency_ns = match s.wake_latency_us {
            None => None,
            Some(w) if w > s.exit_latency_us => {
                return Err(serr(
                    "wake_latency_us",
                    format!(
                        "{w} exceeds exit_latency_us {}: the wake with the package awake cannot take longer than the state's worst case",
                        s.exit_latency_us
                    ),
                ));
            }
            Some(w) => Some(ns(&serr, "wake_latency_us", w)?),
        };
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
            wake_latency_ns,
            target_residency_ns,
            power_mw: s.power_mw,
            polling: s.polling,
            power_gated: s.power_gated,
            entry_exit_uj: s.entry_exit_uj,
            turbo_active: s.turbo_active,
            in_acpi_cst: s.in_acpi_cst,
        });
    }

    Ok((
        CpuType {
            name: t.name.clone(),
            capacity: t.capacity,
            opps,
            base_khz,
            turbo_max_khz: turbo_max_khz.clone(),
            transition_latency_ns,
            idle_states,
            ceff_nf: t.ceff_nf,
            leakage_mw_per_v: t.leakage_mw_per_v,
            dynamic_power_coefficient: t.dynamic_power_coefficient,
            smt_throughput,
            smt_power,
            cppc: t.cppc.as_ref().map(|c| cppc(src, &item, c)).transpose()?,
            hwp_khz_per_perf,
        },
        t.voltage_slew_mv_per_us,
    ))
}

/// A CPU type's `[cpu_type.cppc]`: levels on the 8-bit scale, ordered
/// lowest < lowest non-linear <= nominal <= highest, as amd-pstate's
/// `amd_pstate_init_freq` checks them before it loads.
fn cppc(src: &Source, item: &str, raw: &Spanned<RawCppc>) -> Result<Cppc> {
    let c = raw.get_ref();
    let err = |key: &str, msg: String| src.err(&raw.span(), &format!("{item}.cppc"), key, msg);
    if c.highest_perf > 255 {
        return Err(err("highest_perf", format!("{} is above 255 (an 8-bit CPPC level)", c.highest_perf)));
    }
    if c.nominal_mhz == 0 || c.lowest_perf == 0 {
        return Err(err(if c.nominal_mhz == 0 { "nominal_mhz" } else { "lowest_perf" }, "must be > 0".into()));
    }
    if !(c.lowest_perf < c.lowest_nonlinear_perf && c.lowest_nonlinear_perf <= c.nominal_perf && c.nominal_perf <= c.highest_perf) {
        return Err(err(
            "lowest_perf",
            format!(
                "levels {} < {} <= {} <= {} are out of order (lowest < lowest_nonlinear <= nominal <= highest)",
                c.lowest_perf, c.lowest_nonlinear_perf, c.nominal_perf, c.highest_perf
            ),
        ));
    }
    Ok(Cppc {
        highest_perf: c.highest_perf,
        nominal_perf: c.nominal_perf,
        lowest_nonlinear_perf: c.lowest_nonlinear_perf,
        lowest_perf: c.lowest_perf,
        nominal_khz: c.nominal_mhz * 1000,
    })
}

pub(super) fn device(src: &Source, i: usize, raw: &Spanned<RawDevice>) -> Result<Device> {
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
    if let Some(w) = d.write_mb_per_s {
        positive(&err, "write_mb_per_s", w)?;
    }
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
        write_bytes_per_us: d.write_mb_per_s.unwrap_or(d.mb_per_s),
        service_cv: d.service_cv,
        irq_cpu: d.irq_cpu,
        fua: match d.fua {
            RawFua::None => Fua::None,
            RawFua::Libata => Fua::Libata,
            RawFua::Native => Fua::Native,
        },
    })
}

pub(super) fn positive(err: &impl Fn(&str, String) -> Error, key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(err(key, format!("{v} must be > 0")))
    }
}

pub(super) fn non_negative(err: &impl Fn(&str, String) -> Error, key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(err(key, format!("{v} must be ≥ 0")))
    }
}

/// A µs field in ns.
pub(super) fn ns(err: &impl Fn(&str, String) -> Error, key: &str, us: u64) -> Result<u64> {
    if us > MAX_TIME_US {
        return Err(err(key, format!("{us} µs is more than {MAX_TIME_US} µs")));
    }
    Ok(us * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::testutil::{broken, file_error, line_with, mini, named, MINI};
    use super::super::load_str;
    use super::super::PlatformOverrides;
    use crate::platform::{AcpiPmProfile, PstateMode};

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
        let (_, e) = broken("turbo_max_khz = [1200000]\n", "turbo_max_khz = [1150000]\n");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("cpu_type[1].turbo_max_khz"), "{msg}");
        assert!(line.is_some());
        let (_, e) = broken("turbo_max_khz = [1200000]\n", "turbo_max_khz = [1100000]\n");
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
    fn in_acpi_cst_defaults_to_true_and_is_refused_on_state_zero() {
        let p = load_str(MINI, Path::new("mini.toml")).unwrap();
        assert!(p.cpu_types[0].idle_states.iter().all(|s| s.in_acpi_cst));
        let (_, e) = broken("polling = true", "polling = true\nin_acpi_cst = false");
        assert!(file_error(&e).1.contains("idle_state[0].in_acpi_cst"), "{e}");
        let text = MINI.replacen("power_mw = 0.0\npower_gated = true", "power_mw = 0.0\npower_gated = true\nin_acpi_cst = false", 1);
        assert_ne!(text, MINI, "test bug: no deeper state was changed");
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert!(p.cpu_types[0].idle_states.iter().any(|s| !s.in_acpi_cst), "a deeper state may be outside _CST");
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

    /// A measured wake with the package awake is optional, in µs like the
    /// driver's figure, and never above that worst case.
    #[test]
    fn wake_latency_is_optional_and_bounded_by_the_exit_latency() {
        let p = load_str(MINI, Path::new("mini.toml")).unwrap();
        assert!(p.cpu_types[0].idle_states.iter().all(|s| s.wake_latency_ns.is_none()));
        let text = MINI.replacen("exit_latency_us = 1200", "exit_latency_us = 1200\nwake_latency_us = 300", 1);
        assert_ne!(text, MINI, "test bug: the deep state was not changed");
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        let s = &p.cpu_types[0].idle_states[1];
        assert_eq!((s.exit_latency_ns, s.wake_latency_ns), (1_200_000, Some(300_000)));
        let (text, e) = broken("exit_latency_us = 1200", "exit_latency_us = 1200\nwake_latency_us = 1201");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("cpu_type[0].idle_state[1].wake_latency_us"), "{msg}");
        assert!(msg.contains("exceeds exit_latency_us 1200"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "wake_latency_us")));
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

    /// A power limit's fields are checked and named with their table and
    /// line, and MINI's two CPU types cannot share one (the limit steps one
    /// OPP table).
    #[test]
    fn bad_power_limits_are_rejected() {
        let sky = super::super::builtin::BUILTIN.iter().find(|(n, _)| *n == "skylake-e3-1240v5").unwrap().1;
        for (from, to, key) in [
            ("limit_mw = 80000.0", "limit_mw = 0.0", "package.power_limit.limit_mw"),
            ("window_us = 1000000", "window_us = 0", "package.power_limit.window_us"),
            ("window_us = 1000000", "window_ms = 1000", "window_ms"),
        ] {
            assert!(sky.contains(from), "test bug: {from}");
            let text = sky.replacen(from, to, 1);
            let e = load_str(&text, Path::new("sky.toml")).unwrap_err();
            assert!(e.to_string().contains(key), "{key}: {e}");
            if key.starts_with("package.") {
                assert_eq!(file_error(&e).0, Some(line_with(&text, to)), "{key}: the line of the bad value");
            }
        }
        let (_, e) = broken("uncore_mw = 100.0\n", "uncore_mw = 100.0\n[package.power_limit]\nlimit_mw = 5000.0\nwindow_us = 1000\n");
        assert!(file_error(&e).1.contains("one CPU type"), "{e}");
    }

    /// `min_kernel` must be MAJOR.MINOR and come with its reason, on the
    /// line it is written.
    #[test]
    fn bad_min_kernels_are_rejected() {
        let cml = super::super::builtin::BUILTIN.iter().find(|(n, _)| *n == "i5-10600k").unwrap().1;
        let from = "min_kernel = \"5.6\"";
        assert!(cml.contains(from), "test bug");
        let text = cml.replacen(from, "min_kernel = \"five\"", 1);
        let e = load_str(&text, Path::new("cml.toml")).unwrap_err();
        assert_eq!(file_error(&e).0, Some(line_with(&text, "min_kernel = \"five\"")));
        assert!(file_error(&e).1.contains("MAJOR.MINOR"), "{e}");
        let why = cml.lines().find(|l| l.starts_with("min_kernel_why")).unwrap();
        let e = load_str(&cml.replacen(why, "", 1), Path::new("cml.toml")).unwrap_err();
        assert!(file_error(&e).1.contains("min_kernel_why"), "{e}");
        let e = load_str(&cml.replacen(from, "", 1), Path::new("cml.toml")).unwrap_err();
        assert!(file_error(&e).1.starts_with("min_kernel: missing"), "{e}");
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

    /// `_PSD` coordination is acpi-cpufreq's: elsewhere refused with its
    /// line; an unknown word names the valid ones.
    #[test]
    fn psd_coordination_belongs_to_acpi_cpufreq() {
        let (text, e) = broken("hz = 250\n", "hz = 250\npsd_coordination = \"sw_any\"\n");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("only acpi-cpufreq") && msg.contains("cpufreq-dt"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "psd_coordination")));
        let (_, e) = broken("driver = \"cpufreq-dt\"", "driver = \"acpi-cpufreq\"\npsd_coordination = \"sw\"");
        let (_, msg) = file_error(&e);
        assert!(msg.contains("unknown coordination 'sw'") && msg.contains("hw, sw_all, sw_any"), "{msg}");
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

    /// Issue 16: a field with no safe default is required, named with its
    /// file and table, never filled in silently: turbo_max_khz where an OPP
    /// is turbo, hwp with intel_pstate.
    #[test]
    fn required_fields_are_not_defaulted() {
        let (_, e) = broken("turbo_max_khz = [1200000]\n", "");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("mini.toml") || e.to_string().contains("mini.toml"), "{e}");
        assert!(msg.contains("cpu_type[1].turbo_max_khz") && msg.contains("missing"), "{msg}");
        assert!(line.is_some());
        let (_, e) = broken("driver = \"cpufreq-dt\"", "driver = \"intel_pstate\"");
        assert!(e.to_string().contains("missing key hwp"), "{e}");
        let (_, e) = broken("driver = \"cpufreq-dt\"", "driver = \"cpufreq-dt\"\nhwp = true");
        assert!(e.to_string().contains("hwp = true") && e.to_string().contains("cpufreq-dt"), "{e}");
    }

    /// intel_pstate names frequencies by 100 MHz ratios: a table with a gap
    /// or an off-grid frequency is refused at its line.
    #[test]
    fn intel_pstate_needs_one_opp_per_ratio() {
        let (text, e) = broken("driver = \"cpufreq-dt\"", "driver = \"intel_pstate\"\nhwp = false");
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

//! Helpers shared by the integration tests: test-only governors and small
//! workload and platform files.

use std::io::Write;
use std::path::PathBuf;

use govlab_core::cpufreq::{CpufreqGovernor, Policy, Relation};
use govlab_core::cpuidle::{self, CpuidleGovernor, IdleDevice, Reflection, SelectArgs, Selection};

/// Always the same idle state, tick stopped.
pub struct FixedState(pub usize);

impl CpuidleGovernor for FixedState {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn enable(&mut self, _dev: &IdleDevice<'_>) {}
    fn select(&mut self, _dev: &IdleDevice<'_>, _args: &SelectArgs) -> Selection {
        Selection { state: self.0, stop_tick: true }
    }
    fn reflect(&mut self, _dev: &IdleDevice<'_>, _r: &Reflection) {}
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// A broken oracle: the ideal state shifted by `.0` states (clamped), chosen
/// in hindsight like the real one.
pub struct ShiftedOracle(pub i64);

impl CpuidleGovernor for ShiftedOracle {
    fn name(&self) -> &'static str {
        "shifted-oracle"
    }
    fn enable(&mut self, _dev: &IdleDevice<'_>) {}
    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        let state = self.choose_in_hindsight(dev, &[], args.sleep_length_ns, args.latency_req_ns);
        Selection { state, stop_tick: true }
    }
    fn reflect(&mut self, _dev: &IdleDevice<'_>, _r: &Reflection) {}
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn poll_limit_ns(&mut self, _cpu: usize, _default_ns: u64) -> u64 {
        u64::MAX
    }
    fn chooses_in_hindsight(&self) -> bool {
        true
    }
    fn choose_in_hindsight(&mut self, dev: &IdleDevice<'_>, _idle_mw: &[f64], idle_ns: u64, latency_req_ns: u64) -> usize {
        let ideal = cpuidle::ideal_state(dev.states, dev.disabled, idle_ns, latency_req_ns) as i64;
        (ideal + self.0).clamp(0, dev.states.len() as i64 - 1) as usize
    }
}

/// Lowest frequency at start, highest when its one timer fires at `at_ns`.
pub struct StepUp {
    pub at_ns: u64,
}

impl CpufreqGovernor for StepUp {
    fn name(&self) -> &'static str {
        "step-up"
    }
    fn start(&mut self, p: &mut Policy<'_>) {
        p.set_target(p.min_khz, Relation::L);
        p.arm_timer(self.at_ns, false);
    }
    fn timer(&mut self, p: &mut Policy<'_>, _time_ns: u64) {
        p.set_target(p.max_khz, Relation::H);
    }
    fn tunables(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Write `text` to a fresh file under the target directory and return its
/// path. Each call has its own directory: tests run in parallel threads,
/// and two writing the same name raced (one read the file another had just
/// truncated: power.rs's `one-busy.toml`, seen once).
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("it-{}", std::process::id())).join(call.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    path
}

/// A one-core test machine: `hz`, its OPPs (an inline TOML array) and its
/// idle states (`[[cpu_type.idle_state]]` tables), a 1 mV/µs regulator and
/// a one-deep 100 µs disk.
pub fn one_core_platform(name: &str, hz: u32, opps: &str, idle_states: &str) -> String {
    format!(
        r#"
name = "{name}"
description = "test platform"
driver = "acpi-cpufreq"
hz = {hz}

[topology]
packages = 1
cpu_numbering = "threads-last"
[[topology.cluster]]
cpu_type = "t"
cores = 1
threads_per_core = 1
freq_domain = "core"
llc = "package"

[package]
uncore_mw = 0.0

[[cpu_type]]
name = "t"
capacity = 1024
transition_latency_us = 10
voltage_slew_mv_per_us = 1.0
ceff_nf = 1.0
leakage_mw_per_v = 0.0
opps = {opps}
{idle_states}
[[device]]
name = "ssd"
queue_depth = 1
read_us = 100
write_us = 100
flush_us = 100
block_kb = 4
mb_per_s = 500
"#
    )
}

/// A one-core machine whose two OPPs are 500 mV apart, with a 1 mV/µs
/// regulator: raising the clock waits 500 µs for the voltage.
pub fn slow_rail_platform(high_mv: u32) -> String {
    one_core_platform(
        "slow-rail",
        250,
        &format!("[ {{ khz = 1000000, mv = 700 }}, {{ khz = 2000000, mv = {high_mv} }} ]"),
        r#"[[cpu_type.idle_state]]
name = "POLL"
exit_latency_us = 0
target_residency_us = 0
power_mw = 1.0
polling = true
[[cpu_type.idle_state]]
name = "C1"
exit_latency_us = 2
target_residency_us = 2
power_mw = 0.5
"#,
    )
}

/// The default kernel with housekeeping and its own paths' C0 time off
/// (machine/kpath.rs): a silent machine, for tests whose counts, energies
/// or timings are computed by hand (issue 19).
pub fn silent_kernel() -> govlab_core::kernel::KernelConfig {
    govlab_core::kernel::KernelConfig::from_spec(&govlab_core::params::Spec::parse("6.8:housekeeping=off,kpath=off", "kernel").unwrap()).unwrap()
}

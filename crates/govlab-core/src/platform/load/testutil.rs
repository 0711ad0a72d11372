//! What the loader's tests share: a small valid platform to break one key
//! at a time, and checks of a resolved platform.

use std::path::Path;

use super::{load_named, load_str};
use crate::error::{line_of, Error, Result};
use crate::params::Spec;
use crate::platform::{CpuId, Platform};

/// A small, valid, two-cluster big.LITTLE platform; tests break it one
/// key at a time.
pub(super) const MINI: &str = r#"
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
turbo_max_khz = [1200000]
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

pub(super) fn mini() -> Result<Platform> {
    load_str(MINI, Path::new("mini.toml"))
}

/// MINI with the first occurrence of `from` replaced by `to`.
pub(super) fn broken(from: &str, to: &str) -> (String, Error) {
    assert!(MINI.contains(from), "test bug: {from:?} not in MINI");
    let text = MINI.replacen(from, to, 1);
    let e = load_str(&text, Path::new("mini.toml")).expect_err("the broken text must not load");
    (text, e)
}

/// 1-based line of the first line of `text` containing `needle`.
pub(super) fn line_with(text: &str, needle: &str) -> usize {
    let at = text.find(needle).expect("needle in text");
    line_of(text, at)
}

pub(super) fn file_error(e: &Error) -> (Option<usize>, String) {
    match e {
        Error::File { line, message, .. } => (*line, message.clone()),
        other => panic!("expected Error::File, got {other:?}"),
    }
}

pub(super) fn named(text: &str) -> Result<Platform> {
    load_named(&Spec::parse(text, "platform")?)
}

/// Every index of a resolved platform points back consistently.
pub(super) fn check_consistent(p: &Platform) {
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

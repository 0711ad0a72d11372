//! One snapshot of every governor's resolved default tunables on each
//! shipped platform, so that any change of a default shows in review.
//! Regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p govlab-core --test it defaults`.

use std::fmt::Write;

use govlab_core::params::Spec;
use govlab_core::kernel::KernelConfig;
use govlab_core::{cpufreq, cpuidle, platform};

#[test]
fn governor_defaults_snapshot() {
    let mut out = String::new();
    for name in platform::platform_names() {
        let plat = platform::load_named(&Spec::new(name)).unwrap();
        writeln!(out, "[{name}]").unwrap();
        writeln!(out, "default: cpufreq {}, cpuidle {}", cpufreq::default_governor(&plat, &KernelConfig::default()), cpuidle::DEFAULT_GOVERNOR).unwrap();
        for g in cpufreq::registry() {
            match cpufreq::build(&Spec::new(g.name), &plat) {
                Ok(gov) => writeln!(out, "cpufreq {}: {:?}", g.name, gov.tunables()).unwrap(),
                Err(e) => writeln!(out, "cpufreq {}: not on this driver ({e})", g.name).unwrap(),
            }
        }
        for g in cpuidle::registry() {
            let gov = (g.build)(&Spec::new(g.name), &govlab_core::kernel::BuildCtx::of(plat.clone())).unwrap();
            writeln!(out, "cpuidle {}: {:?}", g.name, gov.tunables()).unwrap();
        }
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/snapshots/governor_defaults.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(path, &out).unwrap();
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(out, want, "governor defaults changed; review and regenerate the snapshot (see the file header)");
}

/// Without HWP, intel_pstate boots in passive mode from v5.8 (33aa46f252c7,
/// intel_pstate_init), so the governor a user finds is schedutil; before,
/// and with HWP, it is intel_pstate's own powersave.
#[test]
fn intel_pstate_without_hwp_boots_passive_from_v5_8() {
    let default_on = |plat: &str, version: &str| {
        let plat = platform::load_named(&Spec::parse(plat, "platform").unwrap()).unwrap();
        let kernel = KernelConfig::from_spec(&Spec::new(version)).unwrap();
        cpufreq::default_governor(&plat, &kernel)
    };
    assert_eq!(default_on("broadwell-2s-e5-2698v4", "5.7"), "powersave");
    assert_eq!(default_on("broadwell-2s-e5-2698v4", "5.9"), "schedutil");
    assert_eq!(default_on("broadwell-2s-e5-2698v4", "6.8"), "schedutil");
    assert_eq!(default_on("broadwell-2s-e5-2698v4:intel_pstate=active", "6.8"), "powersave");
    assert_eq!(default_on("skylake-e3-1240v5", "6.8"), "powersave");
    assert_eq!(default_on("skylake-e3-1240v5:hwp=off", "6.8"), "schedutil");
}

//! The kcycles sitting's raw outputs (tools/calibrate/kcycles: session 26's
//! quiet re-run of session 25's sitting)
//! and their parsers, for the tests that recompute each workload's measured
//! constants from them.

const DIR_RUNS: [[&str; 4]; 2] = [
    [
        include_str!("../../../../tools/calibrate/kcycles/run1/spawn.out"),
        include_str!("../../../../tools/calibrate/kcycles/run1/syscall_cost.out"),
        include_str!("../../../../tools/calibrate/kcycles/run1/loopback.out"),
        include_str!("../../../../tools/calibrate/kcycles/run1/udp.out"),
    ],
    [
        include_str!("../../../../tools/calibrate/kcycles/run2/spawn.out"),
        include_str!("../../../../tools/calibrate/kcycles/run2/syscall_cost.out"),
        include_str!("../../../../tools/calibrate/kcycles/run2/loopback.out"),
        include_str!("../../../../tools/calibrate/kcycles/run2/udp.out"),
    ],
];

/// Which raw output of a run.
#[derive(Clone, Copy)]
pub enum Raw {
    Spawn = 0,
    SyscallCost = 1,
    Loopback = 2,
    Udp = 3,
}

/// The clock samples of the sitting.
pub const CLOCKS: [&str; 2] = [
    include_str!("../../../../tools/calibrate/kcycles/clock.txt"),
    include_str!("../../../../tools/calibrate/kcycles/clock-during.txt"),
];

/// summarize.py's report of the kernel build kernbench.rs takes its costs
/// from: tools/calibrate/k44's (Linux 4.4.178 defconfig, session 28), not
/// the kcycles sitting's tinyconfig.
pub const KBUILD_SUMMARY: &str = include_str!("../../../../tools/calibrate/k44/kbuild-summary.txt");

/// The same tree built twice in one sitting, with gcc 7.3.0 and with
/// Debian's gcc 12.2 (tools/calibrate/k44gcc7, session 41): their quotient
/// per process is what the source's gcc 7 changes in k44's gcc 12 figures.
pub const KBUILD_GCC7: &str = include_str!("../../../../tools/calibrate/k44gcc7/gcc7-kbuild-summary.txt");
pub const KBUILD_GCC12: &str = include_str!("../../../../tools/calibrate/k44gcc7/gcc12-kbuild-summary.txt");

/// Every number that follows `key` on a line of `raw` that contains `line`,
/// both runs: the first number after `key`'s end, as f64.
pub fn after(raw: Raw, line: &str, key: &str) -> Vec<f64> {
    DIR_RUNS
        .iter()
        .flat_map(|r| r[raw as usize].lines())
        .filter(|l| l.contains(line))
        .filter_map(|l| l.split_once(key).map(|(_, rest)| first_number(rest)))
        .collect()
}

/// The first decimal number in `s`.
pub fn first_number(s: &str) -> f64 {
    let t = s.trim_start_matches(|c: char| !c.is_ascii_digit());
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    t[..end].parse().unwrap()
}

/// The fastest of both runs' figures.
pub fn fastest(raw: Raw, line: &str, key: &str) -> f64 {
    let v = after(raw, line, key);
    assert_eq!(v.len(), 2, "{line} {key}");
    v.into_iter().fold(f64::INFINITY, f64::min)
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Least-squares line `a + b x` through `(x, y)` points.
pub fn line(points: &[(f64, f64)]) -> (f64, f64) {
    let mx = mean(&points.iter().map(|p| p.0).collect::<Vec<_>>());
    let my = mean(&points.iter().map(|p| p.1).collect::<Vec<_>>());
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (my - sxy / sxx * mx, sxy / sxx)
}

/// A row of summarize.py's per-object role table in k44's report: (mean ms, cv).
pub fn kbuild_role(role: &str) -> (f64, f64) {
    kbuild_role_in(KBUILD_SUMMARY, role)
}

/// A row of the per-object role table of summarize.py's report `summary`: (mean ms, cv).
pub fn kbuild_role_in(summary: &str, role: &str) -> (f64, f64) {
    let table = &summary[summary.find("== kernel objects").unwrap()..];
    let row = table.lines().find(|l| l.split_whitespace().next() == Some(role) && l.split_whitespace().count() == 7).unwrap();
    let f: Vec<f64> = row.split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect();
    (f[2], f[5])
}

#[test]
fn calibration_clock_is_the_kcycles_sittings_core_clock() {
    let samples: Vec<f64> = CLOCKS
        .iter()
        .flat_map(|t| t.lines())
        .filter_map(|l| l.split_once("clock_ghz ").map(|(_, r)| first_number(r)))
        .collect();
    assert!(samples.len() >= 10, "{}", samples.len());
    let fastest = samples.iter().copied().fold(0.0, f64::max);
    assert!((f64::from(super::CALIBRATION_CORE_KHZ) - fastest * 1e6).abs() < 1000.0, "{fastest}");
}

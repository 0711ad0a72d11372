//! The machine's shape: packages, clusters, cores and threads; the Linux
//! CPU numbering (`threads-last`, `threads-adjacent` or `explicit`); the
//! frequency domains, the voltage domains around them and the LLCs; and the
//! resolution of a checked file into the flat, indexed [`Platform`].

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::checks::{check_pstate_grid, cpu_type, device, driver, non_negative, ns, Source, HZ_VALUES, MAX_THREADS_PER_CORE};
use super::raw::{Numbering, RawCluster, RawCpuType, RawPlatform};
use crate::error::Result;
use crate::platform::{
    AcpiPmProfile, HousekeepingProfile, MinKernel, Core, Cpu, CpuId, CpuType, Dram, Driver, FreqDomain, Package, PackageCState, Platform, PowerLimit, Uncore, UncorePolicy, POWER_DOMAINS,
    VoltageDomain,
};

/// How wide a frequency, voltage or cache domain is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Width {
    Core,
    /// Groups of this many consecutive cores of a cluster.
    Cores(usize),
    Cluster,
    Package,
}

impl Width {
    /// Key of the domain a core belongs to: cores with equal keys share it.
    pub(super) fn key(
        self,
        package: usize,
        cluster: usize,
        core_in_cluster: usize,
    ) -> (usize, Option<usize>, Option<usize>) {
        match self {
            Width::Core => (package, Some(cluster), Some(core_in_cluster)),
            Width::Cores(n) => (package, Some(cluster), Some(core_in_cluster / n)),
            Width::Cluster => (package, Some(cluster), None),
            Width::Package => (package, None, None),
        }
    }

    pub(super) fn name(self) -> String {
        match self {
            Width::Core => "core".into(),
            Width::Cores(n) => format!("cores:{n}"),
            Width::Cluster => "cluster".into(),
            Width::Package => "package".into(),
        }
    }
}

/// A cluster after its checks.
pub(super) struct Cluster {
    pub(super) cpu_type: usize,
    pub(super) cores: usize,
    pub(super) threads: usize,
    pub(super) freq: Width,
    pub(super) voltage: Width,
    pub(super) llc: Width,
    /// Explicit CPU ids (`cpu_numbering = "explicit"`).
    pub(super) cpus: Option<Vec<CpuId>>,
    /// Index into the file's cluster list, for errors.
    pub(super) index: usize,
    pub(super) span: Range<usize>,
}

/// A core before numbering: where it sits.
pub(super) struct CoreSlot {
    pub(super) package: usize,
    pub(super) cluster: usize,
    pub(super) in_cluster: usize,
}

pub(super) fn resolve(src: &Source, raw: RawPlatform) -> Result<Platform> {
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(src.err(&raw.name.span(), "", "name", "must not be empty"));
    }
    let driver = driver(src, &raw)?;
    let hwp = super::checks::hwp(src, &raw, driver)?;
    let acpi_pm_profile = profile(src, raw.acpi_pm_profile.as_ref(), "acpi_pm_profile", &AcpiPmProfile::NAMES)?;
    let psd_sw_coordination = super::checks::psd_coordination(src, &raw, driver)?;
    let housekeeping = profile(src, raw.housekeeping.as_ref(), "housekeeping", &HousekeepingProfile::NAMES)?;
    let min_kernel = match (&raw.min_kernel, raw.min_kernel_why.clone()) {
        (None, None) => None,
        (None, Some(_)) => return Err(src.missing("min_kernel", "missing: min_kernel_why is given without the version it explains")),
        (Some(v), why) => {
            let bad = |msg: String| src.err(&v.span(), "", "min_kernel", msg);
            let parsed = v.get_ref().split_once('.').and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)));
            let Some((major, minor)) = parsed else {
                return Err(bad(format!("'{}' is not a kernel release MAJOR.MINOR (e.g. \"5.6\")", v.get_ref())));
            };
            let Some(why) = why.filter(|w| !w.trim().is_empty()) else {
                return Err(bad("given without min_kernel_why: say which driver needs it".into()));
            };
            Some(MinKernel { major, minor, why })
        }
    };
    let hz = *raw.hz.get_ref();
    if !HZ_VALUES.contains(&hz) {
        return Err(src.err(
            &raw.hz.span(),
            "",
            "hz",
            format!("{hz} is not one of 100, 250, 300, 1000"),
        ));
    }
    if raw.cpu_type.is_empty() {
        return Err(src.missing("cpu_type", "at least one [[cpu_type]] is needed"));
    }

    let (cpu_types, slews): (Vec<CpuType>, Vec<f64>) = raw
        .cpu_type
        .iter()
        .enumerate()
        .map(|(i, t)| cpu_type(src, i, t))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    if matches!(driver, Driver::IntelPstate { .. }) {
        for (i, t) in cpu_types.iter().enumerate() {
            check_pstate_grid(src, i, &raw.cpu_type[i], t)?;
        }
    }
    for (i, t) in cpu_types.iter().enumerate() {
        if cpu_types[..i].iter().any(|u| u.name == t.name) {
            return Err(src.err(
                &raw.cpu_type[i].span(),
                &format!("cpu_type[{i}]"),
                "name",
                format!("'{}' is defined twice", t.name),
            ));
        }
    }

    let topo = raw.topology.get_ref();
    let topo_span = raw.topology.span();
    if topo.packages == 0 || topo.packages > 64 {
        return Err(src.err(
            &topo_span,
            "topology",
            "packages",
            format!("{} is not in 1..=64", topo.packages),
        ));
    }
    if topo.cluster.is_empty() {
        return Err(src.err(
            &topo_span,
            "topology",
            "",
            "at least one [[topology.cluster]] is needed",
        ));
    }
    let clusters = topo
        .cluster
        .iter()
        .enumerate()
        .map(|(i, c)| cluster(src, i, c, &raw.cpu_type, &cpu_types))
        .collect::<Result<Vec<_>>>()?;
    check_package_widths(src, &clusters)?;
    check_cpus_key(src, topo.cpu_numbering, &clusters)?;

    let uncore_mw = raw.package.get_ref().uncore_mw;
    if !(uncore_mw.is_finite() && uncore_mw >= 0.0) {
        return Err(src.err(
            &raw.package.span(),
            "package",
            "uncore_mw",
            format!("{uncore_mw} must be ≥ 0"),
        ));
    }

    let PackagePower { uncore, dram, cstates: pkg_cstates, power_limit } = package_power(src, &raw, &clusters, &cpu_types)?;
    let power_domains = raw.package.get_ref().power_domains.clone();
    if let Some(bad) = power_domains.iter().find(|d| !POWER_DOMAINS.contains(&d.as_str())) {
        return Err(src.err(
            &raw.package.span(),
            "package",
            "power_domains",
            format!("'{bad}' is not one of {}", POWER_DOMAINS.join(", ")),
        ));
    }

    // Cores in package, cluster, core order; this is also the order of
    // thread 0 in the CPU numbering.
    let mut slots = Vec::new();
    for package in 0..topo.packages {
        for (ci, cl) in clusters.iter().enumerate() {
            for in_cluster in 0..cl.cores {
                slots.push(CoreSlot {
                    package,
                    cluster: ci,
                    in_cluster,
                });
            }
        }
    }
    let threads_of = |s: &CoreSlot| clusters[s.cluster].threads;

    // Linux CPU numbers.
    let mut core_cpus: Vec<Vec<CpuId>> = vec![Vec::new(); slots.len()];
    let mut next: CpuId = 0;
    match topo.cpu_numbering {
        Numbering::ThreadsLast => {
            let max_threads = clusters.iter().map(|c| c.threads).max().unwrap_or(1);
            for t in 0..max_threads {
                for (k, s) in slots.iter().enumerate() {
                    if t < threads_of(s) {
                        core_cpus[k].push(next);
                        next += 1;
                    }
                }
            }
        }
        Numbering::ThreadsAdjacent => {
            for (k, s) in slots.iter().enumerate() {
                for _ in 0..threads_of(s) {
                    core_cpus[k].push(next);
                    next += 1;
                }
            }
        }
        Numbering::Explicit => {
            next = explicit_numbering(src, topo.packages, &clusters, &slots, &mut core_cpus)?;
        }
    }
    let nr_cpus = next;

    // Frequency domains, in order of their first core.
    let mut fd_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut fd_of_core = Vec::with_capacity(slots.len());
    let mut freq_domains: Vec<FreqDomain> = Vec::new();
    for (k, s) in slots.iter().enumerate() {
        let cl = &clusters[s.cluster];
        let key = cl.freq.key(s.package, s.cluster, s.in_cluster);
        let fd = *fd_index.entry(key).or_insert_with(|| {
            freq_domains.push(FreqDomain {
                cpus: Vec::new(),
                cores: Vec::new(),
                package: s.package,
                voltage_domain: 0,
                cpu_type: cl.cpu_type,
            });
            freq_domains.len() - 1
        });
        if freq_domains[fd].cpu_type != cl.cpu_type {
            return Err(src.err(
                &cl.span,
                &format!("topology.cluster[{}]", cl.index),
                "freq_domain",
                "a frequency domain spans clusters of different cpu types; use \"cluster\" or narrower",
            ));
        }
        freq_domains[fd].cores.push(k);
        freq_domains[fd].cpus.extend_from_slice(&core_cpus[k]);
        fd_of_core.push(fd);
    }
    for fd in &mut freq_domains {
        fd.cpus.sort_unstable();
    }

    // Voltage domains: every frequency domain must sit inside one.
    let mut vd_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut voltage_domains: Vec<VoltageDomain> = Vec::new();
    for fd in 0..freq_domains.len() {
        let mut key = None;
        for &k in &freq_domains[fd].cores {
            let s = &slots[k];
            let cl = &clusters[s.cluster];
            let this = cl.voltage.key(s.package, s.cluster, s.in_cluster);
            if key.is_some_and(|prev| prev != this) {
                return Err(src.err(
                    &cl.span,
                    &format!("topology.cluster[{}]", cl.index),
                    "voltage_domain",
                    format!(
                        "voltage domain \"{}\" splits frequency domain \"{}\": a voltage domain must hold whole frequency domains",
                        cl.voltage.name(),
                        cl.freq.name()
                    ),
                ));
            }
            key = Some(this);
        }
        let Some(key) = key else { continue };
        let slew = slews[freq_domains[fd].cpu_type];
        let vd = *vd_index.entry(key).or_insert_with(|| {
            voltage_domains.push(VoltageDomain {
                freq_domains: Vec::new(),
                slew_mv_per_us: slew,
            });
            voltage_domains.len() - 1
        });
        // A shared rail moves at the pace of its slowest regulator figure.
        let v = &mut voltage_domains[vd];
        v.slew_mv_per_us = v.slew_mv_per_us.min(slew);
        v.freq_domains.push(fd);
        freq_domains[fd].voltage_domain = vd;
    }

    // LLCs.
    let mut llc_index: HashMap<(usize, Option<usize>, Option<usize>), usize> = HashMap::new();
    let mut llcs: Vec<Vec<CpuId>> = Vec::new();
    let mut llc_of_core = Vec::with_capacity(slots.len());
    for (k, s) in slots.iter().enumerate() {
        let key = clusters[s.cluster]
            .llc
            .key(s.package, s.cluster, s.in_cluster);
        let l = *llc_index.entry(key).or_insert_with(|| {
            llcs.push(Vec::new());
            llcs.len() - 1
        });
        llcs[l].extend_from_slice(&core_cpus[k]);
        llc_of_core.push(l);
    }
    for l in &mut llcs {
        l.sort_unstable();
    }

    // Cores, CPUs and packages.
    let mut cpus: Vec<Option<Cpu>> = vec![None; nr_cpus];
    let mut cores = Vec::with_capacity(slots.len());
    let mut packages: Vec<Package> = (0..topo.packages)
        .map(|_| Package {
            cores: Vec::new(),
            uncore_mw,
            uncore: uncore.clone(),
            dram: dram.clone(),
            cstates: pkg_cstates.clone(),
            power_limit,
        })
        .collect();
    for (k, s) in slots.iter().enumerate() {
        for &cpu in &core_cpus[k] {
            cpus[cpu] = Some(Cpu {
                core: k,
                cpu_type: clusters[s.cluster].cpu_type,
                package: s.package,
                llc: llc_of_core[k],
                freq_domain: fd_of_core[k],
                siblings: core_cpus[k].iter().copied().filter(|&c| c != cpu).collect(),
            });
        }
        packages[s.package].cores.push(k);
        cores.push(Core {
            cpus: core_cpus[k].clone(),
            package: s.package,
            cpu_type: clusters[s.cluster].cpu_type,
            freq_domain: fd_of_core[k],
        });
    }
    // Every id below nr_cpus was handed to exactly one core above.
    let cpus: Vec<Cpu> = cpus.into_iter().flatten().collect();
    debug_assert_eq!(cpus.len(), nr_cpus);

    if raw.device.is_empty() {
        return Err(src.missing("device", "at least one [[device]] is needed"));
    }
    let devices = raw
        .device
        .iter()
        .enumerate()
        .map(|(i, d)| device(src, i, d))
        .collect::<Result<Vec<_>>>()?;
    for (i, d) in devices.iter().enumerate() {
        if let Some(cpu) = d.irq_cpu.filter(|&c| c >= nr_cpus) {
            return Err(src.err(
                &raw.device[i].span(),
                &format!("device[{i}]"),
                "irq_cpu",
                format!("CPU {cpu} does not exist (the platform has CPUs 0-{})", nr_cpus - 1),
            ));
        }
        if devices[..i].iter().any(|e| e.name == d.name) {
            return Err(src.err(
                &raw.device[i].span(),
                &format!("device[{i}]"),
                "name",
                format!("'{}' is defined twice", d.name),
            ));
        }
    }

    Ok(Platform {
        name,
        description: raw.description,
        driver,
        hwp,
        acpi_pm_profile,
        psd_sw_coordination,
        housekeeping,
        min_kernel,
        amd_pstate: None,
        hz,
        idle_tick: None,
        package_cstates: true,
        power_domains,
        cpus,
        cores,
        packages,
        llcs,
        freq_domains,
        voltage_domains,
        cpu_types,
        devices,
    })
}

/// Check a cluster and parse its domain widths.
pub(super) fn cluster(
    src: &Source,
    i: usize,
    raw: &Spanned<RawCluster>,
    raw_types: &[Spanned<RawCpuType>],
    types: &[CpuType],
) -> Result<Cluster> {
    let span = raw.span();
    let c = raw.get_ref();
    let item = format!("topology.cluster[{i}]");
    let Some(cpu_type) = types.iter().position(|t| t.name == c.cpu_type) else {
        let names: Vec<&str> = types.iter().map(|t| t.name.as_str()).collect();
        return Err(src.err(
            &span,
            &item,
            "cpu_type",
            format!(
                "unknown cpu_type '{}'; defined: {}",
                c.cpu_type,
                names.join(", ")
            ),
        ));
    };
    if c.cores == 0 || c.cores > 1024 {
        return Err(src.err(
            &span,
            &item,
            "cores",
            format!("{} is not in 1..=1024", c.cores),
        ));
    }
    if c.threads_per_core == 0 || c.threads_per_core > MAX_THREADS_PER_CORE {
        return Err(src.err(
            &span,
            &item,
            "threads_per_core",
            format!(
                "{} is not in 1..={MAX_THREADS_PER_CORE}",
                c.threads_per_core
            ),
        ));
    }
    if c.threads_per_core > 1 {
        let t = raw_types[cpu_type].get_ref();
        for (key, v) in [
            ("smt_throughput", t.smt_throughput),
            ("smt_power", t.smt_power),
        ] {
            if v.is_none() {
                return Err(src.err(
                    &raw_types[cpu_type].span(),
                    &format!("cpu_type[{cpu_type}]"),
                    key,
                    format!("needed: {item} has {} threads per core", c.threads_per_core),
                ));
            }
        }
    }
    let width = |key: &str, text: &str, allow_groups: bool| -> Result<Width> {
        let w = match text {
            "core" => Some(Width::Core),
            "cluster" => Some(Width::Cluster),
            "package" => Some(Width::Package),
            _ if allow_groups => text
                .strip_prefix("cores:")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1 && c.cores % n == 0)
                .map(Width::Cores),
            _ => None,
        };
        w.ok_or_else(|| {
            let valid = if allow_groups {
                "core, cluster, package or cores:N (N dividing the cluster's cores)"
            } else {
                "core, cluster or package"
            };
            src.err(&span, &item, key, format!("'{text}' is not {valid}"))
        })
    };
    let freq = width("freq_domain", &c.freq_domain, true)?;
    let voltage = width(
        "voltage_domain",
        c.voltage_domain.as_deref().unwrap_or(&c.freq_domain),
        true,
    )?;
    let llc = width("llc", &c.llc, false)?;
    Ok(Cluster {
        cpu_type,
        cores: c.cores,
        threads: c.threads_per_core,
        freq,
        voltage,
        llc,
        cpus: c.cpus.clone(),
        index: i,
        span,
    })
}

/// A package-wide domain joins all clusters of the package, so every cluster
/// must say `package` for it, or none.
pub(super) fn check_package_widths(src: &Source, clusters: &[Cluster]) -> Result<()> {
    type Get = fn(&Cluster) -> Width;
    let checks: [(&str, Get); 3] = [
        ("freq_domain", |c| c.freq),
        ("voltage_domain", |c| c.voltage),
        ("llc", |c| c.llc),
    ];
    for (key, get) in checks {
        let wide = clusters.iter().filter(|c| get(c) == Width::Package).count();
        if wide > 0 && wide < clusters.len() {
            let c = clusters
                .iter()
                .find(|c| get(c) != Width::Package)
                .unwrap_or(&clusters[0]);
            return Err(src.err(
                &c.span,
                &format!("topology.cluster[{}]", c.index),
                key,
                "another cluster makes this domain package-wide, so every cluster of the package must say \"package\" too",
            ));
        }
    }
    Ok(())
}

/// `cpus` goes with `cpu_numbering = "explicit"`, and only with it.
pub(super) fn check_cpus_key(src: &Source, numbering: Numbering, clusters: &[Cluster]) -> Result<()> {
    for c in clusters {
        let item = format!("topology.cluster[{}]", c.index);
        match (numbering, &c.cpus) {
            (Numbering::Explicit, None) => {
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    "missing: topology.cpu_numbering is \"explicit\", so every cluster lists its CPU ids (cpus = [0, 3, 4, 5])",
                ))
            }
            (Numbering::ThreadsLast | Numbering::ThreadsAdjacent, Some(_)) => {
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    "given, but topology.cpu_numbering is not \"explicit\"; set cpu_numbering = \"explicit\" or drop cpus",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Hand every core its CPU ids from its cluster's `cpus` list (core by core,
/// a core's threads adjacent, package by package). The ids of the whole
/// machine must be 0..n, each once. Returns n.
pub(super) fn explicit_numbering(
    src: &Source,
    packages: usize,
    clusters: &[Cluster],
    slots: &[CoreSlot],
    core_cpus: &mut [Vec<CpuId>],
) -> Result<usize> {
    let nr_cpus: usize = packages * clusters.iter().map(|c| c.cores * c.threads).sum::<usize>();
    // Which cluster first named each id, for the duplicate error.
    let mut owner: Vec<Option<usize>> = vec![None; nr_cpus];
    for c in clusters {
        let item = format!("topology.cluster[{}]", c.index);
        let ids = c.cpus.as_deref().unwrap_or_default();
        let want = packages * c.cores * c.threads;
        if ids.len() != want {
            return Err(src.err(
                &c.span,
                &item,
                "cpus",
                format!(
                    "{} CPU ids for {} cores x {} threads x {} packages = {want} CPUs",
                    ids.len(),
                    c.cores,
                    c.threads,
                    packages
                ),
            ));
        }
        for &id in ids {
            if id >= nr_cpus {
                let listed: Vec<CpuId> = clusters.iter().flat_map(|c| c.cpus.iter().flatten().copied()).collect();
                let missing: Vec<String> = (0..nr_cpus)
                    .filter(|n| !listed.contains(n))
                    .map(|n| n.to_string())
                    .collect();
                return Err(src.err(
                    &c.span,
                    &item,
                    "cpus",
                    format!(
                        "CPU {id} is beyond the machine's {nr_cpus} CPUs (ids 0..={}); not listed by any cluster: {}",
                        nr_cpus - 1,
                        missing.join(", ")
                    ),
                ));
            }
            if let Some(first) = owner[id] {
                let where_ = if first == c.index {
                    "twice in this list".to_string()
                } else {
                    format!("already in topology.cluster[{first}]")
                };
                return Err(src.err(&c.span, &item, "cpus", format!("CPU {id} is listed {where_}")));
            }
            owner[id] = Some(c.index);
        }
    }
    // Every id is below nr_cpus and none repeats, and the lists hold
    // nr_cpus ids in all: so none is missing. Hand them out.
    debug_assert!(owner.iter().all(Option::is_some));
    let mut taken = vec![0usize; clusters.len()];
    for (k, s) in slots.iter().enumerate() {
        let c = &clusters[s.cluster];
        let ids = c.cpus.as_deref().unwrap_or_default();
        let at = taken[s.cluster];
        core_cpus[k].extend_from_slice(&ids[at..at + c.threads]);
        taken[s.cluster] = at + c.threads;
    }
    Ok(nr_cpus)
}

/// A package's power description, as the file gives it.
struct PackagePower {
    uncore: Option<Uncore>,
    dram: Dram,
    cstates: Vec<PackageCState>,
    power_limit: Option<PowerLimit>,
}

/// The package's power description: uncore clock, DRAM, package C-states
/// and power limit, checked. Package C-states and a power limit need one
/// CPU type in the package (a package state names a core state of that
/// type; the limit steps through that type's OPPs).
fn package_power(
    src: &Source,
    raw: &RawPlatform,
    clusters: &[Cluster],
    cpu_types: &[CpuType],
) -> Result<PackagePower> {
    let span = raw.package.span();
    let pkg = raw.package.get_ref();
    let err = |key: &str, msg: String| src.err(&span, "package", key, msg);
    let uncore = match &pkg.uncore {
        None => None,
        Some(u) => {
            let uerr = |key: &str, msg: String| src.err(&span, "package.uncore", key, msg);
            let policy = match u.policy.as_str() {
                "ufs" => UncorePolicy::Ufs,
                "follow-cores" => UncorePolicy::FollowCores,
                other => return Err(uerr("policy", format!("'{other}' is not one of ufs, follow-cores"))),
            };
            if u.min_khz == 0 || u.max_khz < u.min_khz {
                return Err(uerr("max_khz", format!("{} must be ≥ min_khz {} > 0", u.max_khz, u.min_khz)));
            }
            if u.max_mv < u.min_mv {
                return Err(uerr("max_mv", format!("{} must be ≥ min_mv {}", u.max_mv, u.min_mv)));
            }
            non_negative(&uerr, "ceff_nf", u.ceff_nf)?;
            Some(Uncore {
                min_khz: u.min_khz,
                max_khz: u.max_khz,
                min_mv: u.min_mv,
                max_mv: u.max_mv,
                ceff_nf: u.ceff_nf,
                policy,
            })
        }
    };
    let dram = match &pkg.dram {
        None => Dram::default(),
        Some(d) => {
            let derr = |key: &str, msg: String| src.err(&span, "package.dram", key, msg);
            non_negative(&derr, "idle_mw", d.idle_mw)?;
            non_negative(&derr, "self_refresh_mw", d.self_refresh_mw)?;
            non_negative(&derr, "active_mw_per_core", d.active_mw_per_core)?;
            Dram { idle_mw: d.idle_mw, self_refresh_mw: d.self_refresh_mw, active_mw_per_core: d.active_mw_per_core }
        }
    };
    let mut cstates: Vec<PackageCState> = Vec::with_capacity(pkg.cstate.len());
    if !pkg.cstate.is_empty() {
        // A package state names a core state by its depth, so the CPU types
        // of a package must list the same states (a hybrid part's do:
        // intel_idle gives every CPU one table).
        let t = clusters[0].cpu_type;
        let names = |t: usize| cpu_types[t].idle_states.iter().map(|s| s.name.as_str()).collect::<Vec<_>>();
        if clusters.iter().any(|c| names(c.cpu_type) != names(t)) {
            return Err(err("cstate", "package C-states need the same idle states on every CPU type in the package".into()));
        }
        let states = &cpu_types[t].idle_states;
        for (j, c) in pkg.cstate.iter().enumerate() {
            let item = format!("package.cstate[{j}]");
            let cerr = |key: &str, msg: String| src.err(&span, &item, key, msg);
            let Some(core_state) = states.iter().position(|s| s.name == c.core_state) else {
                let names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
                return Err(cerr("core_state", format!("'{}' is not one of {}", c.core_state, names.join(", "))));
            };
            if cstates.last().is_some_and(|p| p.core_state > core_state) {
                return Err(cerr("core_state", "package C-states must be listed in increasing depth".into()));
            }
            non_negative(&cerr, "power_mw", c.power_mw)?;
            cstates.push(PackageCState {
                name: c.name.clone(),
                core_state,
                exit_latency_ns: ns(&cerr, "exit_latency_us", c.exit_latency_us)?,
                power_mw: c.power_mw,
                dram_self_refresh: c.dram_self_refresh,
                coordinated: c.coordinated,
            });
        }
    }
    let power_limit = match &pkg.power_limit {
        None => None,
        Some(spanned) => {
            let (lspan, l) = (spanned.span(), spanned.get_ref());
            let lerr = |key: &str, msg: String| src.err(&lspan, "package.power_limit", key, msg);
            if clusters.iter().any(|c| c.cpu_type != clusters[0].cpu_type) {
                return Err(lerr("limit_mw", "a power limit needs one CPU type in the package".into()));
            }
            if !(l.limit_mw.is_finite() && l.limit_mw > 0.0) {
                return Err(lerr("limit_mw", format!("{} must be > 0", l.limit_mw)));
            }
            if l.window_us == 0 {
                return Err(lerr("window_us", "0 must be > 0".into()));
            }
            Some(PowerLimit { limit_mw: l.limit_mw, window_ns: ns(&lerr, "window_us", l.window_us)? })
        }
    };
    Ok(PackagePower { uncore, dram, cstates, power_limit })
}

/// A top-level key naming one of a fixed set of profiles (`acpi_pm_profile`,
/// `housekeeping`): the default when absent, else the named one, or an
/// error at its line listing the valid names.
fn profile<T: Copy + Default>(src: &Source<'_>, value: Option<&Spanned<String>>, key: &str, names: &[(&'static str, T)]) -> Result<T> {
    let Some(v) = value else { return Ok(T::default()) };
    names.iter().find(|(n, _)| *n == v.get_ref().as_str()).map(|&(_, p)| p).ok_or_else(|| {
        let valid: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        src.err(&v.span(), "", key, format!("unknown profile '{}'; valid: {}", v.get_ref(), valid.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use super::super::testutil::{check_consistent, file_error, line_with, mini, MINI};
    use super::super::load_str;
    use crate::error::Error;

    #[test]
    fn big_little_two_clusters_resolve() {
        let p = mini().unwrap();
        assert_eq!(p.nr_cpus(), 6);
        assert_eq!(p.cpu_types.len(), 2);
        assert_eq!(p.cpu_type_of(0).name, "little");
        assert_eq!(p.cpu_type_of(4).name, "big");
        assert_eq!(p.freq_domains.len(), 2);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1, 2, 3]);
        assert_eq!(p.freq_domains[1].cpus, vec![4, 5]);
        assert_eq!(p.cpus[5].freq_domain, 1);
        assert!(p.cpus.iter().all(|c| c.siblings.is_empty()));
        assert_eq!(p.llcs, vec![vec![0, 1, 2, 3], vec![4, 5]]);
        // One rail for both clusters, as slow as the slower regulator figure.
        assert_eq!(p.voltage_domains.len(), 1);
        assert_eq!(p.voltage_domains[0].freq_domains, vec![0, 1]);
        assert!((p.voltage_domains[0].slew_mv_per_us - 5.0).abs() < 1e-12);
        assert_eq!(p.domain_type(1).base_khz, 1_100_000);
        assert_eq!(p.domain_type(1).turbo_limit_khz(2), 1_200_000);
        // SMT defaults to no gain when the type has one thread per core.
        assert!((p.cpu_types[0].smt_throughput - 1.0).abs() < 1e-12);
        assert_eq!(p.cpu_types[0].idle_states[1].desc, "cpu-sleep");
        assert_eq!(p.devices[0].flush_ns, 5_000_000);
        check_consistent(&p);
    }

    #[test]
    fn threads_adjacent_keeps_a_cores_threads_together() {
        let text = MINI
            .replacen("cores = 4\n", "cores = 4\nthreads_per_core = 2\n", 1)
            .replacen(
                "leakage_mw_per_v = 10.0\n",
                "leakage_mw_per_v = 10.0\nsmt_throughput = 1.2\nsmt_power = 1.1\n",
                1,
            );
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.nr_cpus(), 10);
        assert_eq!(p.cpus[0].siblings, vec![1]);
        assert_eq!(p.cpus[7].siblings, vec![6]);
        assert_eq!(p.cpus[8].siblings, Vec::<CpuId>::new());
        assert_eq!(p.cpu_type_of(8).name, "big");
        check_consistent(&p);
    }

    #[test]
    fn cores_n_groups_consecutive_cores() {
        let text = MINI.replacen(
            "freq_domain = \"cluster\"\nvoltage_domain = \"package\"",
            "freq_domain = \"cores:2\"\nvoltage_domain = \"package\"",
            1,
        );
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.freq_domains.len(), 3);
        assert_eq!(p.freq_domains[0].cpus, vec![0, 1]);
        assert_eq!(p.freq_domains[1].cpus, vec![2, 3]);
        check_consistent(&p);
    }

    /// MINI numbered as Juno is: the boot CPU 0 and CPUs 3-5 are LITTLE,
    /// 1 and 2 big.
    fn juno_numbered() -> String {
        MINI.replacen("cpu_numbering = \"threads-adjacent\"", "cpu_numbering = \"explicit\"", 1)
            .replacen("llc = \"cluster\"\n", "llc = \"cluster\"\ncpus = [0, 3, 4, 5]\n", 1)
            .replacen(
                "cores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"package\"\nllc = \"cluster\"\n",
                "cores = 2\nfreq_domain = \"cluster\"\nvoltage_domain = \"package\"\nllc = \"cluster\"\ncpus = [1, 2]\n",
                1,
            )
    }

    #[test]
    fn explicit_numbering_follows_the_lists() {
        let text = juno_numbered();
        assert_eq!(text.matches("cpus = [").count(), 2, "test bug: {text}");
        let p = load_str(&text, Path::new("mini.toml")).unwrap();
        assert_eq!(p.nr_cpus(), 6);
        for cpu in [0, 3, 4, 5] {
            assert_eq!(p.cpu_type_of(cpu).name, "little", "cpu {cpu}");
        }
        for cpu in [1, 2] {
            assert_eq!(p.cpu_type_of(cpu).name, "big", "cpu {cpu}");
        }
        assert_eq!(p.freq_domains[0].cpus, vec![0, 3, 4, 5]);
        assert_eq!(p.freq_domains[1].cpus, vec![1, 2]);
        assert_eq!(p.llcs, vec![vec![0, 3, 4, 5], vec![1, 2]]);
        assert_eq!(p.cores[0].cpus, vec![0]);
        assert_eq!(p.cores[1].cpus, vec![3]);
        assert_eq!(p.cores[4].cpus, vec![1]);
        check_consistent(&p);
    }

    /// Break the Juno-numbered MINI: replace `from` with `to` once.
    fn broken_numbering(from: &str, to: &str) -> (String, Error) {
        let good = juno_numbered();
        assert!(good.contains(from), "test bug: {from:?} not in the text");
        let text = good.replacen(from, to, 1);
        let e = load_str(&text, Path::new("mini.toml")).expect_err("the broken text must not load");
        (text, e)
    }

    #[test]
    fn duplicate_cpu_id_names_both_clusters_and_the_line() {
        let (text, e) = broken_numbering("cpus = [1, 2]", "cpus = [1, 3]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[1].cpus"), "{msg}");
        assert!(msg.contains("CPU 3") && msg.contains("topology.cluster[0]"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [1, 3]")));
        let (_, e) = broken_numbering("cpus = [0, 3, 4, 5]", "cpus = [0, 3, 3, 5]");
        assert!(file_error(&e).1.contains("twice in this list"), "{e}");
    }

    #[test]
    fn missing_cpu_id_is_named() {
        let (text, e) = broken_numbering("cpus = [1, 2]", "cpus = [1, 6]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[1].cpus") && msg.contains("CPU 6"), "{msg}");
        assert!(msg.contains("not listed by any cluster: 2"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [1, 6]")));
    }

    #[test]
    fn cpu_count_must_match_cores_and_threads() {
        let (text, e) = broken_numbering("cpus = [0, 3, 4, 5]", "cpus = [0, 3, 4]");
        let (line, msg) = file_error(&e);
        assert!(msg.contains("topology.cluster[0].cpus"), "{msg}");
        assert!(msg.contains("3 CPU ids for 4 cores x 1 threads x 1 packages = 4 CPUs"), "{msg}");
        assert_eq!(line, Some(line_with(&text, "cpus = [0, 3, 4]")));
    }

    #[test]
    fn cpus_and_numbering_must_agree() {
        let (_, e) = broken_numbering("cpus = [1, 2]\n", "");
        let msg = file_error(&e).1;
        assert!(msg.contains("topology.cluster[1].cpus") && msg.contains("missing"), "{msg}");
        let (_, e) = broken_numbering("cpu_numbering = \"explicit\"", "cpu_numbering = \"threads-adjacent\"");
        let msg = file_error(&e).1;
        assert!(msg.contains("topology.cluster[0].cpus") && msg.contains("explicit"), "{msg}");
    }
}

//! govlab-core: a laboratory for Linux CPU power-management governors.
//!
//! The engine simulates a machine (cores, SMT, frequency and voltage
//! domains, idle states, energy), a Linux-like scheduler with PELT, and
//! workloads, and runs the kernel's cpufreq and cpuidle governors on it,
//! deterministically for a given seed.
//!
//! The modules form layers; each imports only those below it:
//!
//! 1. [`api`]: a run's configuration and its result.
//! 2. [`machine`]: the engine and everything that acts on its state.
//! 3. The parts it drives: the governors ([`cpufreq`], [`cpuidle`]), the
//!    scheduler's arithmetic ([`sched`]), [`workload`] programs, [`trace`]
//!    reading and writing, and [`metrics`].
//! 4. [`kernel`]: the kernel version a run models and its era-dependent
//!    behaviour, beside [`platform`]: the hardware description and its loader.
//! 5. [`params`] and [`error`].
//! 6. [`sim`]: the clock, the event queue and random streams.
//!
//! ```
//! use govlab_core::api::RunConfig;
//! use govlab_core::params::Spec;
//!
//! let cfg = RunConfig {
//!     workload: Spec::parse("periodic:tasks=2,run_us=500,period_us=4000", "workload").unwrap(),
//!     cpufreq: Spec::new("powersave"),
//!     duration_ns: 200_000_000,
//!     ..RunConfig::default()
//! };
//! let result = cfg.run(None, None).unwrap();
//! assert_eq!(result.primary_metric.name, "response_p99_us");
//! assert!(result.energy_j > 0.0);
//! ```

pub mod api;
pub mod cpufreq;
pub mod cpuidle;
pub mod error;
pub mod external;
pub mod input;
pub mod kernel;
pub mod machine;
pub mod metrics;
pub mod params;
pub mod platform;
pub mod sched;
pub mod sim;
pub mod trace;
pub mod workload;

/// govlab's version, stamped on every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A digest of the engine's sources and the data compiled into it
/// (build.rs): two builds with the same digest give the same runs bit for
/// bit, so stored results are keyed by it as well as by [`VERSION`].
pub const ENGINE_DIGEST: &str = env!("GOVLAB_ENGINE_DIGEST");

pub use error::{Error, Result};

//! Loading a platform description: TOML text → checked [`Platform`].
//!
//! A platform file says what the machine is made of; this module turns it into
//! the flat, indexed [`Platform`] the engine uses, in three steps:
//!
//! 1. **Parse** the text into the raw structs below. They mirror the file one
//!    to one, reject unknown keys (a misspelt key fails instead of being
//!    ignored) and keep the byte span of every table, so later errors can name
//!    a line.
//! 2. **Check** every value that the types alone cannot: operating points
//!    sorted by frequency with non-decreasing voltage and turbo ones on top,
//!    idle states that deepen monotonically from state 0 (a polling loop on
//!    x86 and POWER, WFI on Arm; only state 0 may poll), domain
//!    widths that nest, references to cpu types that exist, positive rates.
//!    Each error names the key path (`cpu_type[0].opps[3].khz`) and the line.
//! 3. **Resolve** the topology: number the logical CPUs as Linux does
//!    (`threads-last` on Intel, `threads-adjacent` on POWER and most Arm
//!    boards, or `explicit`: each cluster lists its CPU ids, as on Juno
//!    where the boot CPU 0 is a LITTLE core and the big ones are 1 and 2), group
//!    cores into frequency domains, those into voltage domains, CPUs into LLCs,
//!    and convert the file's µs into the engine's ns once.
//!
//! The shipped platforms (`data/platforms/*.toml`) are compiled into the
//! binary (`builtin.rs`), so a run needs no data directory. [`load_named`] also takes a path
//! ending in `.toml`, and `name:key=value` overrides ([`PlatformOverrides`]):
//! `hz`, `turbo`, `hwp` and `smt` for the machine, and the cpufreq driver's
//! own options: `intel_pstate=active|passive` (the kernel's command-line
//! switch), `amd_pstate=passive|active|guided` (likewise, on CPUs with
//! CPPC levels) and `global_pstate=on|off` (powernv).
//!
//! Files: `builtin.rs` (the built-in table), `raw.rs` (the file as written,
//! step 1), `checks.rs` (step 2 and the errors with file, line and key),
//! `topology.rs` (step 3), `overrides.rs` (`name:key=value` changes).

mod builtin;
mod checks;
mod overrides;
mod raw;
#[cfg(test)]
mod testutil;
mod topology;

use std::path::{Path, PathBuf};

pub use builtin::platform_names;
use builtin::BUILTIN;
use checks::Source;
pub use overrides::PlatformOverrides;
use raw::RawPlatform;
use topology::resolve;

use crate::error::{Error, Result};
use crate::params::{Params, Spec};
use crate::platform::Platform;

/// Read a platform file and load it.
pub fn load_path(path: &Path) -> Result<Platform> {
    let text = crate::input::read_text(path, "platform file", crate::input::MAX_DESCRIPTION_BYTES)?;
    load_str(&text, path)
}

/// Parse, check and resolve a platform description. `path` only names the
/// file in error messages.
pub fn load_str(text: &str, path: &Path) -> Result<Platform> {
    let src = Source { text, path };
    let raw: RawPlatform = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
    resolve(&src, raw)
}

/// Load a built-in platform by name, or a file when the name ends in `.toml`,
/// then apply the spec's overrides (`hz`, `turbo`, `hwp`, `smt`,
/// `intel_pstate`, `amd_pstate`, `global_pstate`).
pub fn load_named(spec: &Spec) -> Result<Platform> {
    let is_file = Path::new(&spec.name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let mut platform = if is_file {
        load_path(Path::new(&spec.name))?
    } else {
        let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == spec.name) else {
            return Err(Error::UnknownName {
                kind: "platform",
                name: spec.name.clone(),
                choices: platform_names().into_iter().map(String::from).collect(),
            });
        };
        load_str(text, &PathBuf::from(format!("data/platforms/{name}.toml")))?
    };
    let mut params = Params::new(format!("platform {}", spec.name), spec);
    let overrides = PlatformOverrides::from_params(&mut params)?;
    params.finish()?;
    overrides.apply(&mut platform)?;
    Ok(platform)
}

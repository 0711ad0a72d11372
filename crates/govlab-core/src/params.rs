//! `NAME:key=value,...` specifications and typed access to their values.
//!
//! The command line, experiment files and the Python API all name a
//! platform, workload or governor with optional `key=value` settings. A
//! [`Spec`] holds them as strings; the owner reads each key with a typed
//! getter and finally calls [`Params::finish`], which rejects any key nobody
//! read, naming the valid ones, so a misspelt tunable fails loudly.
//!
//! Every governor tunable and workload parameter is declared once, as a
//! [`ParamSpec`]: its name, unit, default, valid range and help. The owner's
//! table of specs drives `govlab list`, the typed getters of [`Params`] that
//! read and check values (rejecting or clamping as the kernel's store
//! functions do), and the resolved values shown by `--show-config`.

use crate::error::{Error, Result};

/// A parsed `NAME:k=v,...` specification.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    pub params: Vec<(String, String)>,
}

impl Spec {
    pub fn new(name: impl Into<String>) -> Self {
        Spec {
            name: name.into(),
            params: Vec::new(),
        }
    }

    /// Parse `name[:k=v[,k=v...]]`. `what` names the field the text came
    /// from (`platform`, `workload`, `cpufreq`, `cpuidle`) in errors; the
    /// engine knows no command-line flags.
    pub fn parse(text: &str, what: &str) -> Result<Spec> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (text, None),
        };
        if name.is_empty() {
            return Err(Error::invalid(
                what,
                "name",
                text,
                "a name, optionally followed by ':key=value,...'",
            ));
        }
        let mut spec = Spec::new(name);
        if let Some(rest) = rest {
            for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let Some((k, v)) = item.split_once('=') else {
                    return Err(Error::invalid(
                        format!("{what} {name}"),
                        item,
                        item,
                        "settings are written key=value, separated by commas",
                    ));
                };
                let k = k.trim();
                if spec.params.iter().any(|(seen, _)| seen == k) {
                    return Err(Error::invalid(
                        format!("{what} {name}"),
                        k,
                        v.trim(),
                        format!("each setting once, but {k} is given twice"),
                    ));
                }
                spec.params.push((k.to_string(), v.trim().to_string()));
            }
        }
        Ok(spec)
    }

    #[must_use]
    #[allow(clippy::needless_pass_by_value)] // callers pass numbers and strings alike
    pub fn with(mut self, key: &str, value: impl ToString) -> Self {
        self.params.push((key.to_string(), value.to_string()));
        self
    }

    /// The canonical text form, `name:k=v,...` (keys in the order given).
    pub fn to_text(&self) -> String {
        if self.params.is_empty() {
            return self.name.clone();
        }
        let kv: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}:{}", self.name, kv.join(","))
    }
}

/// The largest value a kernel sysfs store accepts for an unsigned int
/// (kstrtouint): UINT_MAX.
pub const UINT_MAX: u64 = 0xFFFF_FFFF;

/// One setting (a governor tunable or a workload parameter), declared once.
///
/// `C` is what a default or a bound may depend on: the run's build
/// context for governors (`kernel::BuildCtx`: the kernel derives some
/// defaults from the machine and the version), nothing for workloads.
/// (Named `ParamSpec`: it is the declaration that a [`Spec`]'s
/// `key=value` settings are read against, and it serves tunables and
/// workload parameters alike.)
pub struct ParamSpec<C: 'static = ()> {
    /// The key; for a kernel tunable, its sysfs file name.
    pub name: &'static str,
    /// Unit of the value, empty if none (for kernel tunables, the sysfs unit).
    pub unit: &'static str,
    pub default: ParamDefault<C>,
    pub range: Range<C>,
    /// One line for `govlab list`.
    pub help: &'static str,
}

/// A setting's default.
pub enum ParamDefault<C: 'static = ()> {
    Uint(u64),
    Real(f64),
    /// A switch or boolean, shown as its [`Range`] shows values.
    Flag(bool),
    Word(&'static str),
    /// A word default that listings describe with `doc` (such as `auto`
    /// and what it resolves to).
    Described { word: &'static str, doc: &'static str },
    /// No value unless one is given; the text says what happens then.
    Unset(&'static str),
    /// Depends on the machine: `doc` states the rule for listings, `value`
    /// computes it.
    Derived { doc: &'static str, value: fn(&C) -> u64 },
    /// Depends on the machine by a rule that changed with the kernel
    /// version: `doc` states the newest rule, `doc_in` the rule in the
    /// context's kernel (read from the kernel alone), `value` computes it.
    DerivedVersioned { doc: &'static str, doc_in: fn(&C) -> &'static str, value: fn(&C) -> u64 },
    /// Depends on the kernel version alone: `doc` states the rule for
    /// listings, `value` gives the word (a switch's `on`/`off`, or one of
    /// a choice's words) in the context's kernel. It reads nothing of the
    /// machine, so a listing by version can compute it on any machine.
    Versioned { doc: &'static str, value: fn(&C) -> &'static str },
}

/// A setting's valid values and what happens outside them.
pub enum Range<C: 'static = ()> {
    /// An integer in `min..=max`; anything else is rejected.
    Uint { min: u64, max: u64 },
    /// An integer from a machine-dependent minimum to `max`; anything else
    /// is rejected.
    UintFrom { min: fn(&C) -> u64, max: u64 },
    /// Any unsigned 32-bit number (what a sysfs store parses); values above
    /// `max` are clamped to it.
    Clamp { max: u64 },
    /// A real number in `min..=max`; anything else is rejected.
    Real { min: f64, max: f64 },
    /// A switch shown as on/off (read as on/off, true/false, yes/no, 1/0).
    Switch,
    /// A boolean shown as true/false (read like a switch).
    Bool,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// Free text.
    Text,
    /// Read and checked by the owner's own code; `help` gives the forms.
    Custom,
}

impl<C> ParamSpec<C> {
    /// The default as `govlab list` shows it.
    pub fn default_text(&self) -> String {
        match &self.default {
            ParamDefault::Uint(v) => v.to_string(),
            ParamDefault::Real(v) => v.to_string(),
            ParamDefault::Flag(b) => self.flag_text(*b).to_string(),
            ParamDefault::Word(w)
            | ParamDefault::Unset(w)
            | ParamDefault::Described { doc: w, .. }
            | ParamDefault::Derived { doc: w, .. }
            | ParamDefault::DerivedVersioned { doc: w, .. }
            | ParamDefault::Versioned { doc: w, .. } => (*w).to_string(),
        }
    }

    /// The default in `ctx` where it depends on the version alone, else as
    /// [`default_text`](Self::default_text) shows it.
    pub fn default_text_in(&self, ctx: &C) -> String {
        match &self.default {
            ParamDefault::Versioned { value, .. } => value(ctx).to_string(),
            ParamDefault::DerivedVersioned { doc_in, .. } => doc_in(ctx).to_string(),
            _ => self.default_text(),
        }
    }

    /// The integer default, computed for `ctx` where it depends on it.
    ///
    /// # Panics
    /// If the spec's default is not an integer (a bug in its table).
    pub fn uint_default(&self, ctx: &C) -> u64 {
        match &self.default {
            ParamDefault::Uint(v) => *v,
            ParamDefault::Flag(b) => u64::from(*b),
            ParamDefault::Derived { value, .. } | ParamDefault::DerivedVersioned { value, .. } => value(ctx),
            _ => panic!("{}: the default is not an integer", self.name),
        }
    }

    /// The integer (or switch, as 0/1) default where it depends on nothing
    /// (a governor's own constants, not the machine or the version).
    ///
    /// # Panics
    /// If the default depends on a context or is not a number (a bug in
    /// its table).
    pub fn fixed_default(&self) -> u64 {
        match &self.default {
            ParamDefault::Uint(v) => *v,
            ParamDefault::Flag(b) => u64::from(*b),
            _ => panic!("{}: the default is not a fixed number", self.name),
        }
    }

    /// The switch default, computed for `ctx` where it depends on it.
    ///
    /// # Panics
    /// If the spec's default is not a switch (a bug in its table).
    pub fn flag_default(&self, ctx: &C) -> bool {
        match &self.default {
            ParamDefault::Flag(b) => *b,
            ParamDefault::Derived { value, .. } | ParamDefault::DerivedVersioned { value, .. } => value(ctx) != 0,
            ParamDefault::Versioned { value, .. } => value(ctx) == "on",
            _ => panic!("{}: the default is not a switch", self.name),
        }
    }

    fn flag_text(&self, on: bool) -> &'static str {
        match (&self.range, on) {
            (Range::Bool, true) => "true",
            (Range::Bool, false) => "false",
            (_, true) => "on",
            (_, false) => "off",
        }
    }

    /// A resolved value as `--show-config` shows it: (name, value).
    pub fn show(&self, value: impl std::fmt::Display) -> (String, String) {
        (self.name.to_string(), value.to_string())
    }

    /// A resolved switch or boolean, in the words of its range.
    pub fn show_flag(&self, on: bool) -> (String, String) {
        self.show(self.flag_text(on))
    }
}

/// Typed, checked access to a spec's settings for one owner.
#[allow(clippy::struct_field_names)] // a Params holds the spec's params
pub struct Params<'a> {
    owner: String,
    params: &'a [(String, String)],
    known: Vec<&'static str>,
}

impl<'a> Params<'a> {
    /// `owner` is how errors name the thing, e.g. `governor userspace`.
    pub fn new(owner: impl Into<String>, spec: &'a Spec) -> Self {
        Params {
            owner: owner.into(),
            params: &spec.params,
            known: Vec::new(),
        }
    }

    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Whether the spec sets `key` (some checks name the key the user gave).
    pub fn given(&self, key: &str) -> bool {
        self.params.iter().any(|(k, _)| k == key)
    }

    fn raw(&mut self, key: &'static str) -> Option<&'a str> {
        self.known.push(key);
        self.params.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn bad(&self, key: &str, value: &str, expected: String) -> Error {
        Error::invalid(self.owner.clone(), key, value, expected)
    }

    /// An unsigned integer in `[min, max]`.
    pub fn u64(&mut self, key: &'static str, default: u64, min: u64, max: u64) -> Result<u64> {
        let Some(v) = self.raw(key) else { return Ok(default) };
        match v.parse::<u64>() {
            Ok(x) if (min..=max).contains(&x) => Ok(x),
            _ => Err(self.bad(key, v, format!("an integer from {min} to {max} (default {default})"))),
        }
    }

    /// A real number in `[min, max]`.
    pub fn f64(&mut self, key: &'static str, default: f64, min: f64, max: f64) -> Result<f64> {
        let Some(v) = self.raw(key) else { return Ok(default) };
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min && x <= max => Ok(x),
            _ => Err(self.bad(key, v, format!("a number from {min} to {max} (default {default})"))),
        }
    }

    /// A boolean: 1/0, on/off, true/false, yes/no.
    pub fn bool(&mut self, key: &'static str, default: bool) -> Result<bool> {
        let Some(v) = self.raw(key) else { return Ok(default) };
        match v.to_ascii_lowercase().as_str() {
            "1" | "on" | "true" | "yes" => Ok(true),
            "0" | "off" | "false" | "no" => Ok(false),
            _ => Err(self.bad(key, v, format!("on/off, true/false or 1/0 (default {})", u8::from(default)))),
        }
    }

    /// One of a fixed set of words.
    pub fn choice(&mut self, key: &'static str, default: &'static str, choices: &[&'static str]) -> Result<&'static str> {
        let Some(v) = self.raw(key) else { return Ok(default) };
        choices
            .iter()
            .find(|c| **c == v)
            .copied()
            .ok_or_else(|| self.bad(key, v, format!("one of {} (default {default})", choices.join(", "))))
    }

    /// A duration with a unit (`10s`, `500us`, `4ms`, `100ns`), in ns; a bare
    /// number is taken in `bare_unit_ns`.
    pub fn duration_ns(&mut self, key: &'static str, default_ns: u64, bare_unit_ns: u64) -> Result<u64> {
        let Some(v) = self.raw(key) else { return Ok(default_ns) };
        parse_duration_ns(v, bare_unit_ns)
            .ok_or_else(|| self.bad(key, v, "a duration such as 10s, 250ms, 500us or 100ns".into()))
    }

    /// Free text.
    pub fn string(&mut self, key: &'static str) -> Option<String> {
        self.raw(key).map(str::to_string)
    }

    /// Optional unsigned integer.
    pub fn opt_u64(&mut self, key: &'static str, min: u64, max: u64) -> Result<Option<u64>> {
        if self.params.iter().any(|(k, _)| k == key) {
            self.u64(key, min, min, max).map(Some)
        } else {
            self.known.push(key);
            Ok(None)
        }
    }

    /// The integer setting `spec` declares, read and checked as its range
    /// says (rejected or clamped), with its default for `ctx`.
    ///
    /// # Errors
    /// A value that does not parse or that the range rejects.
    ///
    /// # Panics
    /// If the spec is not an integer one (a bug in its table).
    pub fn uint<C>(&mut self, spec: &ParamSpec<C>, ctx: &C) -> Result<u64> {
        let default = spec.uint_default(ctx);
        match &spec.range {
            Range::Uint { min, max } => self.u64(spec.name, default, *min, *max),
            Range::UintFrom { min, max } => self.u64(spec.name, default, min(ctx), *max),
            Range::Clamp { max } => Ok(self.u64(spec.name, default, 0, u64::from(u32::MAX))?.min(*max)),
            _ => panic!("{}: not an integer setting", spec.name),
        }
    }

    /// The optional integer setting `spec` declares (default [`ParamDefault::Unset`]).
    ///
    /// # Errors
    /// A value that does not parse or is out of range.
    ///
    /// # Panics
    /// If the spec is not an integer one (a bug in its table).
    pub fn opt_uint<C>(&mut self, spec: &ParamSpec<C>) -> Result<Option<u64>> {
        match &spec.range {
            Range::Uint { min, max } => self.opt_u64(spec.name, *min, *max),
            _ => panic!("{}: not an integer setting", spec.name),
        }
    }

    /// The real-number setting `spec` declares.
    ///
    /// # Errors
    /// A value that does not parse or is out of range.
    ///
    /// # Panics
    /// If the spec is not a real-number one (a bug in its table).
    pub fn real<C>(&mut self, spec: &ParamSpec<C>) -> Result<f64> {
        match (&spec.range, &spec.default) {
            (Range::Real { min, max }, ParamDefault::Real(d)) => self.f64(spec.name, *d, *min, *max),
            _ => panic!("{}: not a real-number setting", spec.name),
        }
    }

    /// The switch or boolean setting `spec` declares, with its default for `ctx`.
    ///
    /// # Errors
    /// A value that is not a switch word.
    pub fn flag<C>(&mut self, spec: &ParamSpec<C>, ctx: &C) -> Result<bool> {
        let default = spec.flag_default(ctx);
        self.bool(spec.name, default)
    }

    /// The word setting `spec` declares, one of its choices.
    ///
    /// # Errors
    /// A word that is not one of the choices.
    ///
    /// # Panics
    /// If the spec is not a choice (a bug in its table).
    pub fn word<C>(&mut self, spec: &ParamSpec<C>) -> Result<&'static str> {
        match (&spec.range, &spec.default) {
            (Range::Choice(choices), ParamDefault::Word(d) | ParamDefault::Described { word: d, .. }) => {
                self.choice(spec.name, d, choices)
            }
            _ => panic!("{}: not a choice", spec.name),
        }
    }

    /// The word setting `spec` declares, one of its choices, with its
    /// default for `ctx` where it depends on the version.
    ///
    /// # Errors
    /// A word that is not one of the choices.
    ///
    /// # Panics
    /// If the spec is not a choice (a bug in its table).
    pub fn word_in<C>(&mut self, spec: &ParamSpec<C>, ctx: &C) -> Result<&'static str> {
        match (&spec.range, &spec.default) {
            (Range::Choice(choices), ParamDefault::Versioned { value, doc }) => {
                let Some(v) = self.raw(spec.name) else { return Ok(value(ctx)) };
                choices
                    .iter()
                    .find(|c| **c == v)
                    .copied()
                    .ok_or_else(|| self.bad(spec.name, v, format!("one of {} (default: {doc})", choices.join(", "))))
            }
            _ => self.word(spec),
        }
    }

    /// Reject keys nobody asked for.
    pub fn finish(self) -> Result<()> {
        for (k, _) in self.params {
            if !self.known.iter().any(|known| known == k) {
                let mut choices: Vec<String> = self.known.iter().map(|s| (*s).to_string()).collect();
                choices.dedup();
                if choices.is_empty() {
                    choices.push("(none: it takes no settings)".into());
                }
                return Err(Error::UnknownKey {
                    owner: self.owner,
                    key: k.clone(),
                    choices,
                });
            }
        }
        Ok(())
    }
}

/// Parse `10s`, `1.5ms`, `250us`, `100ns`, `2m`; a bare number is in
/// `bare_unit_ns`. None when malformed or negative.
pub fn parse_duration_ns(text: &str, bare_unit_ns: u64) -> Option<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "" => bare_unit_ns as f64,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        _ => return None,
    };
    let ns = x * scale;
    (ns.is_finite() && (0.0..1.8e19).contains(&ns)).then(|| ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trip() {
        let s = Spec::parse("userspace:scaling_setspeed=2000000", "cpufreq").unwrap();
        assert_eq!(s.name, "userspace");
        assert_eq!(s.params, vec![("scaling_setspeed".into(), "2000000".into())]);
        assert_eq!(s.to_text(), "userspace:scaling_setspeed=2000000");
    }

    /// Issue 16: a key given twice is an error, not "the last one wins".
    #[test]
    fn duplicate_keys_are_rejected() {
        let e = Spec::parse("ondemand:up_threshold=50,up_threshold=60", "cpufreq").unwrap_err();
        assert!(matches!(e, Error::InvalidValue { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains("cpufreq ondemand") && m.contains("up_threshold is given twice"), "{m}");
    }

    #[test]
    fn unknown_key_names_valid_ones() {
        let s = Spec::parse("x:foo=1", "cpufreq").unwrap();
        let mut p = Params::new("governor x", &s);
        assert_eq!(p.u64("bar", 3, 0, 10).unwrap(), 3);
        let e = p.finish().unwrap_err().to_string();
        assert!(e.contains("unknown key 'foo'") && e.contains("bar"), "{e}");
    }

    #[test]
    fn out_of_range_is_rejected_with_range() {
        let s = Spec::parse("x:n=11", "w").unwrap();
        let e = Params::new("w", &s).u64("n", 1, 0, 10).unwrap_err().to_string();
        assert!(e.contains("from 0 to 10"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("10s", 1), Some(10_000_000_000));
        assert_eq!(parse_duration_ns("1.5ms", 1), Some(1_500_000));
        assert_eq!(parse_duration_ns("250", 1000), Some(250_000));
        assert_eq!(parse_duration_ns("-1s", 1), None);
        assert_eq!(parse_duration_ns("3 parsecs", 1), None);
    }
}

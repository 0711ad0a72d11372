//! `NAME:key=value,...` specifications and typed access to their values.
//!
//! The command line, experiment files and the Python API all name a
//! platform, workload or governor with optional `key=value` settings. A
//! [`Spec`] holds them as strings; the owner reads each key with a typed
//! getter and finally calls [`Params::finish`], which rejects any key nobody
//! read, naming the valid ones, so a misspelt tunable fails loudly.

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
                spec.params.push((k.trim().to_string(), v.trim().to_string()));
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

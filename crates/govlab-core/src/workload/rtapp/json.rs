//! rt-app's JSON dialect.
//!
//! rt-app reads its files with json-c, which accepts C comments and
//! trailing commas, and its authors write one object key several times
//! (`"run"`, `"sleep"`, `"run"`) meaning events in file order (workgen, rt-app's
//! preprocessor, renames them to unique keys). Strict JSON parsers reject
//! the first two and collapse the third. Here the comments and trailing
//! commas are blanked out (keeping every newline, so serde_json's line
//! numbers stay right) and serde_json parses the rest into a [`Json`] whose
//! objects keep every key, in order.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value whose objects keep duplicate keys in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// The first value of `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Json::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn entries(&self) -> &[(String, Json)] {
        match self {
            Json::Obj(kv) => kv,
            _ => &[],
        }
    }

    /// A short text of the value for error messages.
    pub fn brief(&self) -> String {
        match self {
            Json::Null => "null".into(),
            Json::Bool(b) => b.to_string(),
            Json::Int(i) => i.to_string(),
            Json::Float(f) => f.to_string(),
            Json::Str(s) => format!("\"{s}\""),
            Json::Arr(_) => "[...]".into(),
            Json::Obj(_) => "{...}".into(),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(i64::try_from(v).map_or(Json::Float(v as f64), Json::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Json::Arr(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.push((k, v));
        }
        Ok(Json::Obj(out))
    }
}

/// Blank out `/* */` and `//` comments and commas that close nothing but a
/// `}` or `]`, outside strings; newlines are kept.
pub fn strip_dialect(text: &str) -> String {
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 1;
            } else if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_str = true;
                out.push(c);
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                out.extend(b[i..end].iter().map(|&x| if x == b'\n' { b'\n' } else { b' ' }));
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                out.extend(std::iter::repeat(b' ').take(end - i));
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Trailing commas: a ',' whose next non-blank byte closes a container.
    let mut in_str = false;
    let mut escaped = false;
    for k in 0..out.len() {
        let c = out[k];
        if in_str {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        if c == b'"' {
            in_str = true;
        } else if c == b',' {
            let next = out[k + 1..].iter().find(|x| !x.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                out[k] = b' ';
            }
        }
    }
    String::from_utf8(fill_bare_keys(&out)).unwrap_or_default()
}

/// workgen lets an event's value be left out (`"suspend",`) and fills it in;
/// give such a bare key the empty string as its value.
fn fill_bare_keys(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 16);
    // Open containers; for an object, whether the next string is a key.
    let mut stack: Vec<(u8, bool)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' => stack.push((b'{', true)),
            b'[' => stack.push((b'[', false)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.1 = top.0 == b'{';
                }
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.1 = false;
                }
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(b.len());
                out.extend_from_slice(&b[i..end]);
                let is_key = stack.last().is_some_and(|&(k, key)| k == b'{' && key);
                let next = b[end..].iter().find(|x| !x.is_ascii_whitespace());
                if is_key && matches!(next, Some(b',' | b'}')) {
                    out.extend_from_slice(b": \"\"");
                }
                i = end;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Parse rt-app's dialect; on error, the message and its line.
pub fn parse(text: &str) -> Result<Json, (String, usize)> {
    let clean = strip_dialect(text);
    serde_json::from_str::<Json>(&clean).map_err(|e| (e.to_string(), e.line()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_duplicate_keys_in_order_and_accepts_the_dialect() {
        let text = "{\n /* a comment, with \"quotes\" */\n \"run\": 1, // more\n \"sleep\": 2,\n \"run\": 3,\n \"s\": \"a,}/*b*/\",\n}";
        let j = parse(text).unwrap();
        let keys: Vec<&str> = j.entries().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["run", "sleep", "run", "s"]);
        assert_eq!(j.entries()[2].1, Json::Int(3));
        assert_eq!(j.get("s").and_then(Json::as_str), Some("a,}/*b*/"));
    }

    #[test]
    fn a_bare_key_gets_an_empty_value() {
        let j = parse("{ \"t\": { \"suspend\", \"run\": 5, \"a\": [\"x\", \"y\"], \"resume\" } }").unwrap();
        let t = j.get("t").unwrap();
        assert_eq!(t.get("suspend"), Some(&Json::Str(String::new())));
        assert_eq!(t.get("resume"), Some(&Json::Str(String::new())));
        assert_eq!(t.get("a"), Some(&Json::Arr(vec![Json::Str("x".into()), Json::Str("y".into())])));
    }

    #[test]
    fn reports_the_line_of_a_syntax_error() {
        let (_, line) = parse("{\n\"a\": 1,\n\"b\" 2\n}").unwrap_err();
        assert_eq!(line, 3);
    }
}

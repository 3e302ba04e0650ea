//! One value per key: the I-JSON rule (RFC 7493 §2.3) for JSON text that arrives from outside.
//!
//! Owns [`DuplicateKey`] (which key repeats, and where), [`TextError`], [`parse_unique`] (a
//! `serde_json::Value` parsed in one pass that refuses a repeated key instead of keeping the
//! last one) and the duplicate check [`Node`](super::Node) runs while it parses. Finding the
//! path of a repeated key takes a second pass, made only when a parse failed.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::quote::{QUOTE_LIMIT as SHOWN, bounded};

/// Up to this many members an object's keys are compared one by one; past it, hashed.
const LINEAR: usize = 16;

/// A key that appears more than once in one JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The repeated key.
    pub key: String,
    /// The JSON Pointer of the object holding it (`""` for the root).
    pub path: String,
}

impl DuplicateKey {
    /// The JSON Pointer of the repeated member itself (`/a/key`).
    pub fn member_path(&self) -> String {
        format!("{}/{}", self.path, escape(&self.key))
    }
}

impl fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the top-level object".to_owned()
        } else {
            format!("the object at `{}`", bounded(&self.path, SHOWN))
        };
        write!(
            f,
            "the key `{}` appears more than once in {at}; JSON object keys must be unique (I-JSON, RFC 7493), so send each key once",
            bounded(&self.key, SHOWN)
        )
    }
}

/// Why JSON text from outside was refused.
#[derive(Debug)]
pub enum TextError {
    /// It is not JSON.
    Syntax(serde_json::Error),
    /// It is JSON, but an object repeats a key.
    Duplicate(DuplicateKey),
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Syntax(e) => e.fmt(f),
            TextError::Duplicate(d) => d.fmt(f),
        }
    }
}

impl std::error::Error for TextError {}

/// Parses JSON text into a value, refusing any object that repeats a key (where
/// `serde_json::from_slice` keeps the last value silently).
pub fn parse_unique(text: &[u8]) -> Result<Value, TextError> {
    match serde_json::from_slice::<Unique>(text) {
        Ok(Unique(v)) => Ok(v),
        Err(e) => Err(explain(text, e)),
    }
}

/// The error for text whose parse failed: the repeated key when there is one (the parse that
/// failed could not say where), else the parse error.
fn explain(text: &[u8], error: serde_json::Error) -> TextError {
    match locate_duplicate(text) {
        Some(d) => TextError::Duplicate(d),
        None => TextError::Syntax(error),
    }
}

/// The first repeated key in JSON text, with its path; `None` when there is none (or the text
/// is not JSON before one is found). Nesting is bounded by `serde_json`'s recursion limit.
pub fn locate_duplicate(text: &[u8]) -> Option<DuplicateKey> {
    let mut path = String::new();
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(text);
    let _ = Locate {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de);
    found
}

/// Whether JSON text surely repeats no key, decided in one pass without allocating: `false`
/// when a key repeats, and also when it cannot tell cheaply (a key with escapes, an object of
/// more than 16 members, deep nesting); the caller then takes the full path (`parse_unique`
/// or the borrowed tree), which decides exactly. Text that is not JSON may pass: a caller
/// still parses it strictly.
///
/// ```
/// use tool_core::json::surely_unique;
/// assert!(surely_unique(r#"{"a": [1, {"b": 2}], "b": {"a": null}}"#));
/// assert!(!surely_unique(r#"{"a": [1, {"b": 2, "b": 3}]}"#));
/// assert!(!surely_unique(r#"{"\u0061": 1}"#));
/// ```
pub fn surely_unique(text: &str) -> bool {
    super::scan::scan(text.as_bytes(), usize::MAX, true).surely_unique
}

/// The keys of one object as it is parsed: compared one by one while the object is small.
pub(crate) struct Seen<'a> {
    hashed: Option<HashSet<Cow<'a, str>>>,
}

impl<'a> Seen<'a> {
    pub(crate) fn new() -> Self {
        Seen { hashed: None }
    }

    /// Whether `key` is already among `earlier` (the keys so far, in order).
    // The key is cloned into the set as it is: borrowed from the text when it can be.
    #[allow(clippy::ptr_arg)]
    pub(crate) fn repeats<'k>(&mut self, key: &Cow<'a, str>, mut earlier: impl ExactSizeIterator<Item = &'k Cow<'a, str>>) -> bool
    where
        'a: 'k,
    {
        if let Some(set) = &mut self.hashed {
            return !set.insert(key.clone());
        }
        if earlier.len() < LINEAR {
            return earlier.any(|k| k == key);
        }
        let mut set: HashSet<Cow<'a, str>> = earlier.cloned().collect();
        let repeated = !set.insert(key.clone());
        self.hashed = Some(set);
        repeated
    }
}

/// The marker error of a repeated key (the message is rebuilt with its path).
pub(crate) fn repeated<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("duplicate key `{}`", bounded(key, SHOWN)))
}

/// A `Value` whose objects never repeat a key.
struct Unique(Value);

impl<'de> de::Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            // The map's own lookup is the check: nothing is kept beside it.
            match members.entry(key) {
                serde_json::map::Entry::Occupied(earlier) => return Err(repeated(earlier.key())),
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

/// The second pass: walks the text keeping the JSON Pointer of where it is, and stops at the
/// first repeated key.
struct Locate<'p> {
    path: &'p mut String,
    found: &'p mut Option<DuplicateKey>,
}

impl<'de> DeserializeSeed<'de> for Locate<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Locate<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let base = self.path.len();
        let mut index = 0usize;
        loop {
            self.path.truncate(base);
            self.path.push('/');
            self.path.push_str(&index.to_string());
            let seed = Locate {
                path: &mut *self.path,
                found: &mut *self.found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
            index += 1;
        }
        self.path.truncate(base);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let base = self.path.len();
        let mut keys: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                self.path.truncate(base);
                *self.found = Some(DuplicateKey {
                    path: self.path.clone(),
                    key: key.clone(),
                });
                return Err(repeated(&key));
            }
            self.path.truncate(base);
            self.path.push('/');
            self.path.push_str(&escape(&key));
            keys.insert(key);
            map.next_value_seed(Locate {
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
        }
        self.path.truncate(base);
        Ok(())
    }
}

/// A key as a JSON Pointer segment (RFC 6901: `~` is `~0`, `/` is `~1`).
fn escape(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_repeated_key_is_refused_with_its_path() {
        assert_eq!(parse_unique(br#"{"a": [1, {"b": 2}]}"#).unwrap(), json!({"a": [1, {"b": 2}]}));
        let Err(TextError::Duplicate(d)) = parse_unique(br#"{"a": [1, {"b": 2, "b": 3}]}"#) else {
            panic!()
        };
        assert_eq!((d.key.as_str(), d.path.as_str()), ("b", "/a/1"));
    }

    fn duplicate(text: &str) -> DuplicateKey {
        match parse_unique(text.as_bytes()) {
            Err(TextError::Duplicate(d)) => d,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn repeated_keys_are_refused_with_their_path() {
        let d = duplicate(r#"{"a": 1, "a": 2}"#);
        assert_eq!((d.key.as_str(), d.path.as_str()), ("a", ""));
        assert_eq!(d.member_path(), "/a");
        let d = duplicate(r#"{"x": {"ok": [0, {"a/b": 1, "a/b": 2}]}}"#);
        assert_eq!((d.key.as_str(), d.path.as_str()), ("a/b", "/x/ok/1"));
        assert_eq!(d.member_path(), "/x/ok/1/a~1b");
        // Escapes do not hide a repeat: "\u0061" is "a".
        assert_eq!(duplicate(r#"{"a": 1, "\u0061": 2}"#).key, "a");
        let msg = d.to_string();
        assert!(
            msg.contains("`a/b`") && msg.contains("`/x/ok/1`") && msg.contains("RFC 7493"),
            "{msg}"
        );
    }

    #[test]
    fn large_objects_are_checked_by_hash() {
        let mut text = String::from("{");
        for i in 0..100 {
            text.push_str(&format!("\"k{i}\": {i},"));
        }
        text.push_str("\"k3\": 0}");
        assert_eq!(duplicate(&text).key, "k3");
        let unique = format!("{}}}", &text[..text.len() - 9]);
        assert_eq!(parse_unique(unique.as_bytes()).unwrap()["k99"], json!(99));
    }

    #[test]
    fn unique_text_parses_like_serde_json_and_syntax_errors_stay_syntax_errors() {
        let text = r#"{"n": -1, "u": 18446744073709551615, "f": 1.5, "s": "é\n", "z": null, "b": [true, {}]}"#;
        let ours = parse_unique(text.as_bytes()).unwrap();
        assert_eq!(ours, serde_json::from_str::<Value>(text).unwrap());
        assert!(matches!(parse_unique(br#"{"a": 1,"#), Err(TextError::Syntax(_))));
        assert!(locate_duplicate(br#"{"a": 1,"#).is_none());
        // A repeat before the syntax error is found; one after it is not reached.
        assert!(locate_duplicate(br#"{"a": 1, "a": 2, x"#).is_some());
        assert!(matches!(parse_unique(br#"{"a": x, "a": 2}"#), Err(TextError::Syntax(_))));
    }

    #[test]
    fn deep_text_is_refused_without_overflowing() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(parse_unique(deep.as_bytes()), Err(TextError::Syntax(_))));
        assert!(locate_duplicate(deep.as_bytes()).is_none());
    }

    #[test]
    fn long_keys_are_bounded_in_messages() {
        let key = "k".repeat(5000);
        let d = duplicate(&format!(r#"{{"{key}": 1, "{key}": 2}}"#));
        let msg = d.to_string();
        assert!(msg.len() < 600, "{}", msg.len());
        assert!(msg.contains("5000 characters in all"), "{msg}");
    }
}

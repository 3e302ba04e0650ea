//! The partial-JSON consistency checker shared by the property tests
//! (`tool-core/tests/it/stream/partial_json_props.rs`) and the fuzz target
//! (`fuzz/fuzz_targets/partial_json.rs`, which includes this file by path).

#![allow(dead_code)]

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Whether `partial` can be a preview of `full`: complete members equal, strings prefixes,
/// arrays a prefix of the final elements (the last possibly partial), objects a subset of the
/// final members of which at most one (the one being read) is partial. A number being read is
/// a prefix of the final integer's digits (`1` of `12`), or any number if the final one is a
/// float (`1.5` of `1.5e3`, `1` of `1.5`).
pub fn consistent(partial: &Value, full: &Value) -> bool {
    match (partial, full) {
        (Value::String(p), Value::String(f)) => f.starts_with(p.as_str()),
        (Value::Number(p), Value::Number(f)) => f.is_f64() || (!p.is_f64() && f.to_string().starts_with(&p.to_string())),
        (Value::Array(p), Value::Array(f)) => match p.split_last() {
            None => true,
            Some((last, init)) => p.len() <= f.len() && init == &f[..init.len()] && consistent(last, &f[init.len()]),
        },
        (Value::Object(p), Value::Object(f)) => {
            let mut open = 0;
            let members = p.iter().all(|(k, v)| match f.get(k) {
                Some(w) if w == v => true,
                Some(w) => {
                    open += 1;
                    consistent(v, w)
                }
                None => false,
            });
            members && open <= 1
        }
        _ => partial == full,
    }
}

/// The preview of the whole input: `null` until anything can be shown.
pub fn consistent_root(partial: &Value, full: &Value) -> bool {
    partial.is_null() || consistent(partial, full)
}

/// Deserialises anything, failing on a duplicate object key (where `serde_json` keeps the
/// last value, so an earlier preview need not be a prefix of the result).
pub struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key) {
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}

pub fn has_duplicate_keys(doc: &str) -> bool {
    serde_json::from_str::<NoDuplicateKeys>(doc).is_err()
}

//! Fuzzes `tool_core::partial_json::PartialJson`.
//!
//! Input: one control byte choosing the delta sizes, then the document (skipped unless it is
//! UTF-8, since deltas are `&str`). Checks: no panic; the document fed in deltas and fed at
//! once give the same result, and the same error at the same offset; `finish` succeeds exactly
//! when `serde_json::from_str` does, with the same value; an error sticks; for a valid document
//! without duplicate keys, every preview is consistent with the final value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tool_core::partial_json::{PartialJson, PartialJsonError};

#[path = "../../tool-core/tests/support/partial_json_check.rs"]
mod check;
use check::{consistent_root, has_duplicate_keys};

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else { return };
    let Ok(doc) = std::str::from_utf8(rest) else { return };
    check(doc, &deltas(doc, control));
});

/// Delta sizes from an xorshift stream seeded by `control`: 0 means one delta, otherwise
/// sizes in 1..=`control % 32 + 1`, each end moved up to a char boundary.
fn deltas(doc: &str, control: u8) -> Vec<&str> {
    if control == 0 {
        return vec![doc];
    }
    let max = u64::from(control % 32) + 1;
    let mut x = u64::from(control).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::new();
    let mut at = 0;
    while at < doc.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut end = (at + 1 + (x % max) as usize).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        out.push(&doc[at..end]);
        at = end;
    }
    out
}

fn check(doc: &str, deltas: &[&str]) {
    let expected = serde_json::from_str::<Plain>(doc).map(|p| p.0);
    let oracle = match &expected {
        Ok(v) if !has_duplicate_keys(doc) => Some(v),
        _ => None,
    };

    let mut p = PartialJson::new();
    let mut fed = 0;
    let mut push_error = None;
    for delta in deltas {
        match p.push(delta) {
            Ok(()) => {
                fed += delta.len();
                assert_eq!(p.len(), fed);
                if let Some(full) = oracle {
                    assert!(
                        consistent_root(p.value(), full),
                        "after {fed} bytes: {} is not a prefix of {full}",
                        p.value()
                    );
                }
            }
            Err(e) => {
                assert!(expected.is_err(), "valid document rejected: {e}");
                assert!(e.offset <= doc.len());
                assert_eq!(p.push("0"), Err(e.clone()), "errors stick");
                push_error = Some(e);
                break;
            }
        }
    }
    let complete = p.is_complete();
    let preview = p.value().clone();
    let ours = p.finish();
    if complete {
        assert!(ours.is_ok(), "is_complete() but finish() failed: {ours:?}");
    }
    match (&expected, &ours) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("serde_json: {expected:?}, ours: {ours:?}"),
    }
    if let Some(e) = &push_error {
        assert_eq!(ours.as_ref(), Err(e));
    }

    // The same document at once: the same outcome, and the same preview if nothing failed.
    let mut q = PartialJson::new();
    let at_once = q.push(doc);
    assert_eq!(at_once.as_ref().err(), push_error.as_ref(), "push error depends on the deltas");
    if at_once.is_ok() {
        assert_eq!(q.value(), &preview, "preview depends on the deltas");
    }
    let at_once: Result<Value, PartialJsonError> = q.finish();
    assert_eq!(at_once, ours, "result depends on the deltas");
}

/// The oracle's value: serde_json's `Value` without its reserved keys. `Value` reads a map
/// whose key is `$serde_json::private::RawValue` (when a dependency turns on serde_json's
/// `raw_value` feature) as a request for its private type and refuses the document, although
/// it is JSON; our parser reads that key as the key it is. This visitor builds the same
/// `Value` from the same parse (numbers, strings and recursion limit as serde_json's) with
/// every key an ordinary key.
struct Plain(Value);

impl<'de> serde::Deserialize<'de> for Plain {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PlainVisitor).map(Plain)
    }
}

struct PlainVisitor;

impl<'de> serde::de::Visitor<'de> for PlainVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
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
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Plain(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some((k, Plain(v))) = map.next_entry::<String, Plain>()? {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

//! Property tests for `tool_core::partial_json`: every prefix of a valid document parses
//! without panic to a preview consistent with the full document, and the final value equals
//! `serde_json`'s; invalid documents error (exactly when `serde_json` does) and never panic.

use crate::support::partial_json_check::{consistent_root, has_duplicate_keys};

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Map, Number, Value};
use tool_core::partial_json::{PartialJson, PartialJsonError};

#[test]
fn the_checker_itself() {
    use serde_json::json;
    let full = json!({"a": [1, "xyz", {"b": true}], "c": "hello", "d": 12});
    for ok in [
        json!(null),
        json!({}),
        json!({"a": []}),
        json!({"a": [1, "x"]}),
        json!({"a": [1, "xyz", {}]}),
        json!({"c": "hello", "d": 1}),
        json!({"a": [1, "xyz", {"b": true}], "d": 1}),
    ] {
        assert!(consistent_root(&ok, &full), "{ok}");
    }
    for bad in [
        json!([]),
        json!({"a": [2]}),
        json!({"a": ["x"]}),
        json!({"c": "hx"}),
        json!({"e": 1}),
        json!({"a": [1, "x"], "c": "he"}),
        json!({"c": "he", "d": 1}),
        json!({"d": 2}),
        json!({"d": 1.5}),
        json!({"d": 1.0}),
    ] {
        assert!(!consistent_root(&bad, &full), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// Generators

fn arb_string() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        '"', '\\', '/', '\n', '\t', '\r', '\u{0}', '\u{1f}', '\u{7f}', 'é', '日', '😀', '\u{2028}', '\u{fffd}',
    ]);
    prop_oneof![
        "[a-z ]{0,10}",
        prop::collection::vec(prop_oneof![any::<char>(), tricky, Just('a')], 0..12).prop_map(|cs| cs.into_iter().collect()),
    ]
}

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-1000i64..1000).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        arb_string().prop_map(Value::String)
    ];
    leaf.prop_recursive(6, 128, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
            prop::collection::btree_map(arb_string(), inner, 0..10).prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// How a value is written out.
#[derive(Debug, Clone, Copy)]
enum Style {
    Compact,
    Pretty,
    /// Every non-ASCII char and `/` escaped (surrogate pairs for astral chars), floats in
    /// exponent notation, whitespace sprinkled between tokens.
    Exotic(u64),
}

fn arb_style() -> impl Strategy<Value = Style> {
    prop_oneof![Just(Style::Compact), Just(Style::Pretty), any::<u64>().prop_map(Style::Exotic)]
}

fn write(v: &Value, style: Style) -> String {
    match style {
        Style::Compact => serde_json::to_string(v).unwrap(),
        Style::Pretty => serde_json::to_string_pretty(v).unwrap(),
        Style::Exotic(seed) => {
            let mut out = String::new();
            let mut ws = Ws(seed | 1);
            write_exotic(v, &mut ws, &mut out);
            out
        }
    }
}

/// A xorshift stream choosing whitespace.
struct Ws(u64);

impl Ws {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn put(&mut self, out: &mut String) {
        out.push_str(["", "", "", " ", "\n", "\t", "\r\n  "][(self.next() % 7) as usize]);
    }
}

fn write_exotic(v: &Value, ws: &mut Ws, out: &mut String) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap();
            let text = format!("{f:e}");
            out.push_str(&if ws.next() & 1 == 0 {
                text
            } else {
                text.replace("e-", "E-").replace('e', "E+")
            });
        }
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '/' => out.push_str("\\/"),
                    '\n' => out.push_str("\\n"),
                    '\u{8}' => out.push_str("\\b"),
                    ' '..='~' => out.push(c),
                    _ => {
                        let mut units = [0u16; 2];
                        for unit in c.encode_utf16(&mut units) {
                            out.push_str(&if ws.next() & 1 == 0 {
                                format!("\\u{unit:04x}")
                            } else {
                                format!("\\u{unit:04X}")
                            });
                        }
                    }
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                ws.put(out);
                if i > 0 {
                    out.push(',');
                    ws.put(out);
                }
                write_exotic(item, ws, out);
            }
            ws.put(out);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                ws.put(out);
                if i > 0 {
                    out.push(',');
                    ws.put(out);
                }
                write_exotic(&Value::String(k.clone()), ws, out);
                ws.put(out);
                out.push(':');
                ws.put(out);
                write_exotic(item, ws, out);
            }
            ws.put(out);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Renames every object key to `{key}#{id}{id}` with an id unique in the value, so that no
/// single-character edit of the document can make two keys equal.
fn unique_keys(v: Value, next: &mut usize) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.into_iter().map(|x| unique_keys(x, next)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, x)| {
                    *next += 1;
                    (format!("{k}#{n:03}{n:03}", n = *next), unique_keys(x, next))
                })
                .collect(),
        ),
        other => other,
    }
}

/// Cuts `doc` into deltas of the given sizes (cycled), each moved up to a char boundary.
fn split<'a>(doc: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at == doc.len() {
            break;
        }
        let mut end = (at + size).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        out.push(&doc[at..end]);
        at = end;
    }
    out
}

fn chars(doc: &str) -> Vec<&str> {
    doc.char_indices().map(|(i, c)| &doc[i..i + c.len_utf8()]).collect()
}

/// Feeds `deltas`; checks after each one that the preview is consistent with `full` and that
/// the preview equals that of the same prefix fed at once. Returns the finished result.
fn feed_checked(deltas: &[&str], full: &Value, compare_every: usize) -> Result<Result<Value, PartialJsonError>, TestCaseError> {
    let mut p = PartialJson::new();
    let mut fed = 0;
    for (n, delta) in deltas.iter().enumerate() {
        p.push(delta)
            .map_err(|e| TestCaseError::fail(format!("valid prefix rejected: {e}")))?;
        fed += delta.len();
        prop_assert_eq!(p.len(), fed);
        prop_assert!(
            consistent_root(p.value(), full),
            "after {} bytes: {} is not a prefix of {}",
            fed,
            p.value(),
            full
        );
        if n % compare_every == 0 {
            let mut at_once = PartialJson::new();
            at_once.push(&deltas[..=n].concat()).unwrap();
            prop_assert_eq!(at_once.value(), p.value(), "preview depends on how {} bytes were split", fed);
        }
    }
    Ok(p.finish())
}

fn check_valid(doc: &str, sizes: &[usize]) -> Result<(), TestCaseError> {
    let full: Value = serde_json::from_str(doc).unwrap();
    // Every prefix, char by char, for documents of moderate size.
    if doc.len() <= 2_000 {
        let end = feed_checked(&chars(doc), &full, 97)?;
        prop_assert_eq!(end.as_ref(), Ok(&full));
    }
    // Random deltas.
    let end = feed_checked(&split(doc, sizes), &full, 1)?;
    prop_assert_eq!(end.as_ref(), Ok(&full));
    // All at once.
    let mut p = PartialJson::new();
    p.push(doc).unwrap();
    prop_assert!(p.is_complete());
    prop_assert_eq!(p.finish(), Ok(full));
    Ok(())
}

/// For any input: no panic; the first error sticks; every preview before it is consistent
/// with the last one (unless duplicate keys may be about); `finish` succeeds exactly when
/// `serde_json` does, with the same value.
fn check_any(doc: &str, deltas: &[&str], keys_unique: bool) -> Result<(), TestCaseError> {
    let mut p = PartialJson::new();
    let mut previews = Vec::new();
    let mut error = None;
    for delta in deltas {
        match p.push(delta) {
            Ok(()) => previews.push(p.value().clone()),
            Err(e) => {
                prop_assert!(e.offset <= doc.len());
                prop_assert_eq!(p.push("]"), Err(e.clone()), "errors stick");
                error = Some(e);
                break;
            }
        }
    }
    let serde = serde_json::from_str::<Value>(doc);
    let ours = p.finish();
    match (&serde, &ours) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => prop_assert!(
            false,
            "serde_json: {:?}, ours: {:?} (error while pushing: {:?})",
            serde,
            ours,
            error
        ),
    }
    if (keys_unique || (serde.is_ok() && !has_duplicate_keys(doc)))
        && let Some(last) = previews.last()
    {
        for v in &previews {
            prop_assert!(consistent_root(v, last), "{} is not a prefix of {}", v, last);
        }
    }
    Ok(())
}

/// Replaces, inserts or deletes one char.
fn mutate(doc: &str, at: prop::sample::Index, op: u8, c: char) -> String {
    let bounds: Vec<usize> = doc.char_indices().map(|(i, _)| i).chain([doc.len()]).collect();
    let i = bounds[at.index(bounds.len())];
    let rest = if i < doc.len() { &doc[i..] } else { "" };
    let next = rest.chars().next().map_or(0, char::len_utf8);
    match op % 3 {
        0 => format!("{}{}{}", &doc[..i], c, &rest[next..]),
        1 => format!("{}{}{}", &doc[..i], c, rest),
        _ => format!("{}{}", &doc[..i], &rest[next..]),
    }
}

fn json_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select("{}[],:\"\\ \n0123456789-+.eEtrufalsn/x".chars().collect::<Vec<_>>()),
        any::<char>()
    ]
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn valid_documents(v in arb_json(), style in arb_style(), sizes in prop::collection::vec(1usize..48, 1..16)) {
        check_valid(&write(&v, style), &sizes)?;
    }

    #[test]
    fn mutated_documents(v in arb_json(), style in arb_style(), at in any::<prop::sample::Index>(), op in any::<u8>(), c in json_char(),
                         sizes in prop::collection::vec(1usize..24, 1..8)) {
        let doc = mutate(&write(&unique_keys(v, &mut 0), style), at, op, c);
        check_any(&doc, &chars(&doc), true)?;
        check_any(&doc, &split(&doc, &sizes), true)?;
    }

}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn json_like_noise(doc in "[\\[\\]{}\",:0-9eE.+\\- \\\\tfalsenru]{0,40}") {
        check_any(&doc, &chars(&doc), false)?;
    }

    #[test]
    fn arbitrary_text(doc in any::<String>(), sizes in prop::collection::vec(1usize..8, 1..8)) {
        check_any(&doc, &split(&doc, &sizes), false)?;
    }
}

proptest! {
    #![proptest_config(config(16))]

    /// Larger documents (tens of KiB), fed in random deltas only.
    #[test]
    fn large_documents(items in prop::collection::vec(arb_json(), 50..200), style in arb_style(), sizes in prop::collection::vec(1usize..300, 1..16)) {
        let doc = write(&Value::Array(items), style);
        let full: Value = serde_json::from_str(&doc).unwrap();
        let end = feed_checked(&split(&doc, &sizes), &full, 50)?;
        prop_assert_eq!(end, Ok(full));
    }
}

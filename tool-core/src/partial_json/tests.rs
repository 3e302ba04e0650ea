//! The parser's own cases: previews, errors, limits.

use serde_json::json;

use super::*;

/// Feeds `text` in one delta per char; returns the previews after each and the result.
fn previews(text: &str) -> (Vec<Value>, Result<Value, PartialJsonError>) {
    let mut p = PartialJson::new();
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        if let Err(e) = p.push(&text[i..i + c.len_utf8()]) {
            return (out, Err(e));
        }
        out.push(p.value().clone());
    }
    (out, p.finish())
}

fn preview_of(text: &str) -> Value {
    let mut p = PartialJson::new();
    p.push(text).unwrap();
    p.value().clone()
}

fn error_of(chunks: &[&str]) -> PartialJsonError {
    let mut p = PartialJson::new();
    for c in chunks {
        if let Err(e) = p.push(c) {
            // Poisoned: the same error again.
            assert_eq!(p.push("1"), Err(e.clone()));
            return e;
        }
    }
    p.finish().unwrap_err()
}

#[test]
fn previews_of_prefixes() {
    let cases: &[(&str, Value)] = &[
        ("", Value::Null),
        ("  ", Value::Null),
        ("{", json!({})),
        ("[", json!([])),
        (r#"{"a"#, json!({})),
        (r#"{"a""#, json!({})),
        (r#"{"a":"#, json!({})),
        (r#"{"a": -"#, json!({})),
        (r#"{"a": t"#, json!({})),
        (r#"{"a": tru"#, json!({})),
        (r#"{"a": true"#, json!({"a": true})),
        (r#"{"a": n"#, json!({})),
        (r#"{"a": null"#, json!({"a": null})),
        (r#"{"a": fals"#, json!({})),
        (r#"{"a": false ,"#, json!({"a": false})),
        (r#"{"a": ""#, json!({"a": ""})),
        (r#"{"a": "he"#, json!({"a": "he"})),
        (r#"{"a": "he\"#, json!({"a": "he"})),
        (r#"{"a": "he\n"#, json!({"a": "he\n"})),
        (r#"{"a": "x\u00"#, json!({"a": "x"})),
        (r#"{"a": "x\u00e9"#, json!({"a": "xé"})),
        (r#"{"a": "\ud83d"#, json!({"a": ""})),
        (r#"{"a": "\ud83d\"#, json!({"a": ""})),
        (r#"{"a": "\ud83d\ude0"#, json!({"a": ""})),
        (r#"{"a": "\ud83d\ude00"#, json!({"a": "😀"})),
        (r#"{"a": 1"#, json!({"a": 1})),
        (r#"{"a": 12"#, json!({"a": 12})),
        (r#"{"a": 12."#, json!({"a": 12})),
        (r#"{"a": 12.5"#, json!({"a": 12.5})),
        (r#"{"a": 12.5e"#, json!({"a": 12.5})),
        (r#"{"a": 12.5e-"#, json!({"a": 12.5})),
        (r#"{"a": 12.5e-1"#, json!({"a": 1.25})),
        (r#"{"a": -0"#, json!({"a": -0.0})),
        (r#"{"a": [1, [2, {"b": "c"#, json!({"a": [1, [2, {"b": "c"}]]})),
        (r#"{"a": [1, [2, {"b": "c"}], "#, json!({"a": [1, [2, {"b": "c"}]]})),
        (r#"{"a": [1, [2, {"b": "c"}]], "d"#, json!({"a": [1, [2, {"b": "c"}]]})),
        (r#"["x", tr"#, json!(["x"])),
        (r#"["x", -"#, json!(["x"])),
        ("\"top", json!("top")),
        ("12", json!(12)),
        ("-", Value::Null),
        ("[] ", json!([])),
    ];
    for (text, want) in cases {
        assert_eq!(&preview_of(text), want, "preview of {text:?}");
    }
}

#[test]
fn char_by_char_previews_lead_to_the_full_value() {
    let text = r#" {"name": "Ada \"the\" Countess\u0021", "tags": ["x", "y\/z"], "n": -12.5E+2, "ok": true, "nil": null,
        "nested": {"deep": [[[]], {}], "emoji": "\ud83d\ude00 日本"}, "big": 18446744073709551616 } "#;
    let (steps, end) = previews(text);
    let full: Value = serde_json::from_str(text).unwrap();
    assert_eq!(end.unwrap(), full);
    assert_eq!(steps.last().unwrap(), &full);
    // A few milestones along the way.
    assert!(steps.contains(&json!({"name": "Ada \"the\" Countess"})));
    assert!(steps.contains(&json!({"name": "Ada \"the\" Countess!", "tags": ["x", "y/"]})));
    assert!(steps.contains(&json!({"name": "Ada \"the\" Countess!", "tags": ["x", "y/z"], "n": -12.5})));
}

#[test]
fn escapes_and_numbers_split_across_deltas() {
    let mut p = PartialJson::new();
    for chunk in [
        "[\"a\\u12",
        "34\", \"\\",
        "ud83d",
        "\\",
        "u",
        "de00",
        "\", 1",
        "2.",
        "5",
        "e",
        "+",
        "3]",
    ] {
        p.push(chunk).unwrap();
    }
    assert_eq!(p.finish().unwrap(), json!(["a\u{1234}", "😀", 12.5e3]));
}

#[test]
fn top_level_scalars_and_completeness() {
    for text in ["0", "-0", "12", "1.5e3", "true", "false", "null", "\"s\"", " 7 ", "[]", "{}"] {
        let mut p = PartialJson::new();
        p.push(text).unwrap();
        assert!(p.is_complete(), "{text:?}");
        assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(text).unwrap(), "{text:?}");
    }
    for text in ["", " ", "-", "1.", "1e", "1e+", "tru", "\"s", "[", "{\"a\":1"] {
        let mut p = PartialJson::new();
        p.push(text).unwrap();
        assert!(!p.is_complete(), "{text:?}");
        let e = p.finish().unwrap_err();
        assert_eq!(e.offset, text.len(), "{text:?}");
        assert!(e.message.starts_with("unexpected end of input"), "{e}");
    }
}

#[test]
fn errors_say_where() {
    let cases: &[(&[&str], usize, &str)] = &[
        (&["[1,", " ]"], 4, "expected a JSON value"),
        (&["{\"a\":1,}"], 7, "expected a key"),
        (&["{\"a\" 1}"], 5, "expected ':'"),
        (&["[1 2]"], 3, "expected ',' or ']'"),
        (&["{\"a\":1]"], 6, "expected ',' or '}'"),
        (&["[1}"], 2, "expected ',' or ']'"),
        (&["[tx"], 2, "invalid literal"),
        (&["[-x"], 2, "invalid number"),
        (&["[1.x"], 3, "invalid number"),
        (&["[01]"], 2, "expected ',' or ']'"),
        (&["{} x"], 3, "trailing characters"),
        (&["1 2"], 2, "trailing characters"),
        (&["\"a\u{1}\""], 2, "control character"),
        (&["\"\\x\""], 2, "invalid escape"),
        (&["\"\\u12g4\""], 5, "invalid \\u escape"),
        (&["\"\\udc00\""], 6, "unpaired surrogate"),
        (&["\"\\ud800", "x\""], 7, "unpaired surrogate"),
        (&["\"\\ud800\\n\""], 8, "unpaired surrogate"),
        (&["\"\\ud800\\u0041\""], 12, "unpaired surrogate"),
        (&["[1e400]"], 1, "number out of range"),
        (&["é"], 0, "expected a JSON value"),
    ];
    for (chunks, offset, msg) in cases {
        let e = error_of(chunks);
        assert_eq!(e.offset, *offset, "{chunks:?}: {e}");
        assert!(e.message.contains(msg), "{chunks:?}: {e}");
        assert!(serde_json::from_str::<Value>(&chunks.concat()).is_err(), "{chunks:?}");
    }
    let e = error_of(&["[tx"]);
    assert_eq!(e.to_string(), "invalid JSON at byte 2: unexpected 'x': invalid literal");
}

#[test]
fn error_keeps_the_preview_and_len() {
    let mut p = PartialJson::new();
    p.push("[1, \"ab").unwrap();
    assert!(p.push("c\", x").is_err());
    assert_eq!(p.value(), &json!([1, "abc"]));
    assert_eq!(p.len(), 11);
    assert!(!p.is_complete());
}

#[test]
fn depth_limit_matches_serde_json() {
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, 100_000] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut p = PartialJson::new();
        let ours = p.push(&text).and_then(|_| p.finish());
        let theirs = serde_json::from_str::<Value>(&text);
        assert_eq!(ours.is_ok(), theirs.is_ok(), "depth {depth}");
        if depth >= MAX_DEPTH {
            assert_eq!(ours.unwrap_err().offset, MAX_DEPTH - 1);
        }
    }
    // Objects count too; no stack overflow on drop or clone of the deepest allowed tree.
    let text = format!("{}1{}", "{\"k\":[".repeat(63), "]}".repeat(63));
    let mut p = PartialJson::new();
    p.push(&text).unwrap();
    let copy = p.clone();
    assert_eq!(copy.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
}

#[test]
fn duplicate_keys_keep_the_last_like_serde_json() {
    let text = r#"{"a": [1], "b": 2, "a": "x"}"#;
    let (_, end) = previews(text);
    assert_eq!(end.unwrap(), serde_json::from_str::<Value>(text).unwrap());
    assert_eq!(preview_of(r#"{"a": [1], "a": "#), json!({"a": [1]}));
    assert_eq!(preview_of(r#"{"a": [1], "a": {"#), json!({"a": {}}));
}

#[test]
fn long_numbers_stay_linear_and_exact() {
    let digits = "7".repeat(10_000);
    let text = format!("[1.{digits}e-3]");
    let mut p = PartialJson::new();
    for chunk in text.as_bytes().chunks(16) {
        p.push(std::str::from_utf8(chunk).unwrap()).unwrap();
        assert!(p.value().as_array().unwrap().iter().all(Value::is_number));
    }
    assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
}

#[test]
fn number_previews_do_not_depend_on_the_deltas() {
    let long = format!("[1{}", "2".repeat(100));
    let want: Value = serde_json::from_str(&long[1..65]).unwrap();
    for size in [1, 3, 7, long.len()] {
        let mut p = PartialJson::new();
        for chunk in long.as_bytes().chunks(size) {
            p.push(std::str::from_utf8(chunk).unwrap()).unwrap();
        }
        assert_eq!(p.value(), &json!([want]), "deltas of {size}");
    }
    // Out of range for good (the exponent can only grow): an error as soon as it is seen.
    for text in ["[-12e+5300", r#"{"a": 1e999"#, "1e999", "[0.5e400, 1]"] {
        for size in [1, 3, 7, text.len()] {
            let mut p = PartialJson::new();
            let e = text
                .as_bytes()
                .chunks(size)
                .find_map(|c| p.push(std::str::from_utf8(c).unwrap()).err());
            let e = e.unwrap_or_else(|| p.finish().unwrap_err());
            assert_eq!(e.message, "number out of range", "{text:?} in deltas of {size}");
            assert_eq!(e.offset, text.find(['-', '0', '1']).unwrap(), "{text:?}");
        }
    }
    // Not out of range: a long mantissa brought back by a negative exponent.
    let text = format!("[1{}e-300]", "0".repeat(400));
    let mut p = PartialJson::new();
    p.push(&text).unwrap();
    assert_eq!(p.finish().unwrap(), serde_json::from_str::<Value>(&text).unwrap());
}

#[test]
fn whitespace_everywhere() {
    let text = " \t\n\r{ \"a\" \n:\t[ 1 , 2 ] , \"b\" : { } } \n";
    let (steps, end) = previews(text);
    assert_eq!(end.unwrap(), json!({"a": [1, 2], "b": {}}));
    assert_eq!(steps[3], Value::Null);
}
